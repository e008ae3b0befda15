/**
 * When to try a call again, as the specification prescribes (its §7): a 429 after `Retry-After`; a 5xx
 * or a connection that failed with exponential backoff and jitter; never another 4xx. Every endpoint is
 * safe to retry (user creation is idempotent on the email, batches on the media ids).
 */
export type RetryPolicy = {
  /** Tries after the first; 0 turns retrying off. */
  maxRetries: number;
  /** The backoff's first ceiling; each retry doubles it, up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** A 429 asking for a longer wait than this fails at once, for the caller to schedule. */
  maxRetryAfterSeconds: number;
};

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxRetries: 4,
  baseDelayMs: 250,
  maxDelayMs: 8_000,
  maxRetryAfterSeconds: 60,
};

/** A retry about to happen: after a status (429, 5xx) or a connection's failure. */
export type RetryEvent = {
  method: string;
  url: string;
  /** 1 for the first retry. */
  retry: number;
  delayMs: number;
  status: number | null;
  error: unknown;
};

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Whole seconds of a `Retry-After` header, or null when absent or not a number of seconds. */
function retryAfterSeconds(response: Response): number | null {
  const value = response.headers.get("retry-after");
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : null;
}

/** Full jitter: anywhere from 0 to the ceiling, so clients that failed together do not retry together. */
const backoffMs = (policy: RetryPolicy, retry: number) =>
  Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (retry - 1));

/** How long to wait before retrying after this answer, or null when it is final. */
function delayAfter(response: Response, policy: RetryPolicy, retry: number): number | null {
  const asked = retryAfterSeconds(response);
  if (response.status === 429) {
    if (asked !== null && asked > policy.maxRetryAfterSeconds) return null;
    return asked === null ? backoffMs(policy, retry) : asked * 1000;
  }
  if (response.status >= 500) return Math.max(backoffMs(policy, retry), (asked ?? 0) * 1000);
  return null;
}

/**
 * `fetch` that retries as `policy` says. The body is read once and sent again with each try; a request
 * its caller aborted is not retried.
 */
export function retryingFetch(
  fetchOnce: (request: Request) => Promise<Response>,
  policy: RetryPolicy,
  onRetry: (event: RetryEvent) => void = () => {},
): (request: Request) => Promise<Response> {
  return async (request) => {
    const body = request.body === null ? undefined : await request.arrayBuffer();
    const { method, url, headers, signal } = request;
    // Attempt n, when it fails and may be retried, is followed by retry n.
    for (let attempt = 1; ; attempt++) {
      const last = attempt > policy.maxRetries;
      let delayMs: number | null;
      let status: number | null = null;
      let failure: unknown = null;
      try {
        const response = await fetchOnce(new Request(url, { method, headers, body, signal }));
        status = response.status;
        delayMs = last ? null : delayAfter(response, policy, attempt);
        if (delayMs === null) return response;
        // Read to the end, so its connection goes back to the pool.
        await response.arrayBuffer();
      } catch (error) {
        if (last || signal.aborted) throw error;
        failure = error;
        delayMs = backoffMs(policy, attempt);
      }
      onRetry({ method, url, retry: attempt, delayMs, status, error: failure });
      await sleep(delayMs);
    }
  };
}
