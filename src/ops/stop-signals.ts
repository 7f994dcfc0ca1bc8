// Stop signals (SIGTERM, SIGINT), watched from the process's first moment for its whole life. Node as
// PID 1 (the image runs no init) ignores a signal it has no handler of its own for, so the handler is
// installed by the entry (main.ts) before the service's modules load, and never removed: handing over
// from one handler to the next could drop a signal between them. What a signal does depends on the
// phase; the graceful shutdown (lifecycle.ts) adds its own handler once the service listens.
export interface StopSignals {
  /** The first stop signal received, if any. */
  readonly received: NodeJS.Signals | undefined;
  /** What a stop signal does from now on (also at once, if one came already); undefined records it only. */
  onStop(action: ((signal: NodeJS.Signals) => void) | undefined): void;
}

export function watchStopSignals(): StopSignals {
  let received: NodeJS.Signals | undefined;
  let action: ((signal: NodeJS.Signals) => void) | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    const first = received === undefined;
    received ??= signal;
    if (first) action?.(signal);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  return {
    get received() {
      return received;
    },
    onStop(next) {
      action = next;
      if (received !== undefined) next?.(received);
    },
  };
}
