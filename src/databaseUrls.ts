/**
 * What the database URLs must say when PostgreSQL runs with standbys (docs/operations.md §9), checked
 * with the rest of the configuration (config.ts).
 */

/** Whether a libpq-style URL names several hosts (`postgres://user@h1:5432,h2:5432/db`). */
function namesSeveralHosts(url: string): boolean {
  const authority = url.slice(url.indexOf("://") + 3).split(/[/?]/)[0] ?? "";
  return authority.slice(authority.lastIndexOf("@") + 1).includes(",");
}

/**
 * docs/operations.md §9: with several hosts, writes must go to the one that accepts them, whatever the
 * order the hosts answer in; standbys serve reads only beside a primary the service writes to.
 */
export function replicationProblems(url: unknown, readUrl: unknown): string[] {
  const problems: string[] = [];
  if (typeof url === "string" && namesSeveralHosts(url)) {
    const attrs = /[?&]target_session_attrs=([^&]*)/.exec(url)?.[1];
    if (attrs !== "read-write" && attrs !== "primary") {
      problems.push(
        `DATABASE_URL: names several hosts without target_session_attrs=read-write (got ${JSON.stringify(attrs ?? null)}), so writes could reach a standby`,
      );
    }
  }
  if (readUrl !== null && url === null) {
    problems.push(
      "DATABASE_READ_URL: set without DATABASE_URL, expected the primary's URL beside the standbys'",
    );
  }
  return problems;
}
