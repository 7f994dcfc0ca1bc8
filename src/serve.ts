// The service's start: config -> logger, keys, metrics -> scorer -> app -> listeners -> graceful
// shutdown. A model that fails to load leaves the process up and degraded; a bad setting exits
// non-zero. A stop signal during start-up ends it with exit 0, never while the scorer's workers load
// their native libraries (exiting then aborts the process).
import { buildApp, scorerOptions } from './app.ts';
import { ConfigError, loadConfig, type Config } from './config.ts';
import { loadApiKeys, MIN_KEY_CHARS, type ApiKeySet } from './http/auth.ts';
import { reloadCertificateOnChange, type CertificateReload, type SecureContextTarget } from './http/certificate-reload.ts';
import { resolveTls, serverOptions, startListeners, type ResolvedTls } from './http/listeners.ts';
import { installGracefulShutdown } from './ops/lifecycle.ts';
import { createLogger } from './ops/logger.ts';
import { createMetrics } from './ops/metrics.ts';
import { buildMetricsServer } from './http/metrics-listener.ts';
import { createScorer } from './scoring/scorer.ts';
import type { StopSignals } from './ops/stop-signals.ts';

function fail(message: string): never {
  process.stderr.write(`conversation-risk: ${message}\n`);
  process.exit(1);
}

export async function serve(stop: StopSignals): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    fail(err instanceof ConfigError ? err.message : `invalid configuration: ${String(err)}`);
  }

  const logger = createLogger({ level: config.LOG_LEVEL, sync: config.AUDIT_LOG });
  const stopped = (signal: NodeJS.Signals): never => {
    logger.info({ signal }, 'stopped during start-up');
    logger.flush();
    process.exit(0);
  };
  // Nothing is in flight and no worker is loading: a stop (also one that came while this loaded) ends it now.
  stop.onStop(stopped);
  logger.info({ model_dir: config.MODEL_DIR, workers: config.WORKERS }, 'starting');

  let keySet: ApiKeySet;
  try {
    keySet = loadApiKeys(config);
  } catch (err) {
    // The message names the variable or the entry number, never an entry itself.
    const source = config.API_KEYS_FILE !== undefined ? 'API_KEYS_FILE' : 'API_KEYS';
    fail(`invalid configuration: ${source}: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`);
  }
  if (keySet.short > 0) {
    logger.warn({ keys: keySet.short }, `API keys shorter than ${MIN_KEY_CHARS} characters are configured: use random keys of 32 or more`);
  }
  if (keySet.generated !== undefined) {
    // Straight to stderr, once: the JSON log (often shipped elsewhere) must never carry a key.
    process.stderr.write(`\nNo API key configured. Generated key for this process (shown once):\n\n  ${keySet.generated}\n\n`);
    logger.warn('no API_KEYS or API_KEYS_FILE configured: generated a key for this process and printed it to stderr once');
  }

  let tls: ResolvedTls | undefined;
  if (config.TLS_MODE === 'on') {
    try {
      tls = await resolveTls(config);
    } catch (err) {
      fail(`invalid configuration: TLS_CERT_FILE/TLS_KEY_FILE: ${err instanceof Error ? err.message : String(err)}`);
    }
    logger.info(
      { tls_fingerprint_sha256: tls.fingerprint256, not_after: tls.notAfter.toISOString(), self_signed: tls.selfSigned },
      tls.selfSigned ? 'no TLS certificate configured: generated a self-signed one' : 'TLS certificate loaded',
    );
  }

  const metrics = createMetrics();
  // From here a stop is recorded and acted on at the next step: the workers are not left while they
  // load, and the app's start is bounded (Redis: 5 s at most).
  stop.onStop(undefined);
  logger.info({ workers: config.WORKERS }, 'loading model');
  const scorer = await createScorer(scorerOptions(config, metrics, logger));
  if (stop.received !== undefined) {
    await scorer.close();
    stopped(stop.received);
  }
  metrics.observeScorer(scorer);
  if (scorer.ready && scorer.manifest !== undefined) {
    logger.info({ model: scorer.manifest.name, version: scorer.manifest.version, workers: config.WORKERS, fast_tokenizer: scorer.fastTokenizer }, 'model loaded');
    if (scorer.fastTokenizer === false) {
      // Still correct, but at a fraction of the speed (README "Tokenizing"): the sizing in the bench no longer holds.
      logger.warn("the tokenizer's fast path did not reproduce the native ids at load: every text goes through the native binding");
    }
  } else {
    logger.error({ model_dir: config.MODEL_DIR, reason: scorer.loadError }, 'model not loaded: serving degraded (/health degraded, scoring 503)');
  }

  const app = await buildApp({ config, scorer, keys: keySet.keys, logger, metrics, ...(tls ? { tls } : {}) });
  const metricsServer = config.METRICS_PORT > 0 ? buildMetricsServer(metrics, serverOptions(config)) : undefined;
  const listeners = await startListeners({ app, metricsServer, config }).catch((err: unknown) => {
    fail(`cannot listen: ${err instanceof Error ? err.message : String(err)}`);
  });
  logger.info(
    { url: listeners.appUrl, redirect_port: listeners.redirectPort, metrics_port: listeners.metricsPort },
    'listening',
  );

  // A renewed certificate is served without a restart; its expiry is exported either way.
  let certificate: CertificateReload | undefined;
  if (tls !== undefined && config.TLS_CERT_FILE !== undefined && config.TLS_KEY_FILE !== undefined) {
    certificate = reloadCertificateOnChange({
      target: app.server as unknown as SecureContextTarget,
      certFile: config.TLS_CERT_FILE,
      keyFile: config.TLS_KEY_FILE,
      current: tls,
      intervalMs: config.TLS_RELOAD_INTERVAL_MS,
      onReload: (next) => logger.info({ tls_fingerprint_sha256: next.fingerprint256, not_after: next.notAfter.toISOString() }, 'TLS certificate reloaded'),
      onRejected: (reason) => logger.error({ reason }, 'TLS certificate files changed but cannot be used: still serving the previous certificate'),
    });
  }
  if (tls !== undefined) {
    const served = tls;
    metrics.observeCertificate(() => certificate?.current().notAfter ?? served.notAfter);
  }

  const shutdown = installGracefulShutdown({
    logger,
    graceMs: config.SHUTDOWN_GRACE_MS,
    steps: [
      { name: 'certificate reload', run: async () => certificate?.stop() },
      { name: 'listeners', run: () => listeners.close() },
      { name: 'scorer', run: () => scorer.close() },
    ],
  });
  // A stop that came while the app and its listeners started: shut down as for one that comes now.
  if (stop.received !== undefined) shutdown.close();
}
