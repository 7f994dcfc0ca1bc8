// Certificate renewal without a restart: cert-manager (or an operator) replaces the mounted PEM files,
// and the API listener serves the new pair from the next handshake. The files are read again every
// TLS_RELOAD_INTERVAL_MS and compared by content, not watched: a Kubernetes secret volume swaps a
// symlink (`..data`) that inotify on the file path does not report.
import { readFile } from 'node:fs/promises';
import type { SecureContextOptions } from 'node:tls';
import { describeTls, tlsContextOptions, type ResolvedTls } from './listeners.ts';

/** What a reload needs from the listener: Node's https.Server has it. */
export interface SecureContextTarget {
  setSecureContext(options: SecureContextOptions): void;
}

export interface CertificateReloadOptions {
  target: SecureContextTarget;
  certFile: string;
  keyFile: string;
  /** The pair being served now (resolveTls at start). */
  current: ResolvedTls;
  intervalMs: number;
  /** A new pair is served. */
  onReload(tls: ResolvedTls): void;
  /** A changed pair could not be used; the previous one is still served. Told once per changed pair. */
  onRejected(reason: string): void;
}

export interface CertificateReload {
  /** The pair being served. */
  current(): ResolvedTls;
  /** Reads the files once now (the timer does the same). */
  check(): Promise<void>;
  stop(): void;
}

export function reloadCertificateOnChange(o: CertificateReloadOptions): CertificateReload {
  let served = o.current;
  // The last pair refused, so a half-written renewal (new certificate, old key) is reported once.
  let refused: string | undefined;
  let running: Promise<void> | undefined;
  const check = async (): Promise<void> => {
    let cert: string;
    let key: string;
    try {
      [cert, key] = await Promise.all([readFile(o.certFile, 'utf8'), readFile(o.keyFile, 'utf8')]);
    } catch (err) {
      const reason = `cannot read the files (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
      if (refused !== reason) o.onRejected(reason);
      refused = reason;
      return;
    }
    if (cert === served.cert && key === served.key) return;
    const pair = `${cert}\n${key}`;
    if (pair === refused) return;
    let next: ResolvedTls;
    try {
      next = describeTls({ cert, key }, false);
    } catch (err) {
      refused = pair;
      o.onRejected(err instanceof Error ? err.message : String(err));
      return;
    }
    o.target.setSecureContext(tlsContextOptions(next));
    served = next;
    refused = undefined;
    o.onReload(next);
  };
  // One read at a time: a slow disk must not stack checks.
  const once = (): Promise<void> => (running ??= check().finally(() => (running = undefined)));
  const timer = setInterval(() => void once(), o.intervalMs);
  timer.unref();
  return { current: () => served, check: once, stop: () => clearInterval(timer) };
}
