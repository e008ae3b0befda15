import type { Config } from "../config.ts";
import type { CatalogFacts } from "../flows/catalogFacts/eventFacts.ts";
import type { RateLimits } from "../limits/index.ts";
import type { Log } from "../observability/log.ts";
import type { Metrics } from "../observability/metrics.ts";
import type { Matcher } from "../shards/matcher.ts";
import type { Store } from "../store/db.ts";

/** Everything the HTTP layer needs, built by main.ts (or a test) and handed in. */
export type AppDeps = {
  config: Config;
  store: Store;
  matcher: Matcher;
  limits: RateLimits;
  /** Secret that signs history cursors; the same on every instance sharing a database. */
  cursorSecret: string;
  log: Log;
  /** Where the counters go; absent, nothing is counted (tests that do not look at them). */
  metrics?: Metrics;
};

/** What the handlers are built with: the app's dependencies and the caches the app keeps for the flows. */
export type ResourceDeps = AppDeps & CatalogFacts;
