// What every protected route plugin receives, v1 and later interfaces alike. A leaf: app.ts builds
// it, route plugins read it, and neither imports the other for it.
import type { Config } from '../config.ts';
import type { ScoringDeps } from '../http/scoring-call.ts';
import type { Logger } from '../ops/logger.ts';
import type { Metrics } from '../ops/metrics.ts';
import type { SharedRedis } from '../ops/redis.ts';

export interface ProtectedRouteDeps extends ScoringDeps {
  config: Config;
  logger: Logger;
  /** Undefined when METRICS_PORT is 0; the jobs' own metrics then go to a registry nobody scrapes. */
  metrics: Metrics | undefined;
  /** The shared Redis when REDIS_URL is set: rate limits and v2 jobs then hold across replicas. */
  shared?: SharedRedis | undefined;
}
