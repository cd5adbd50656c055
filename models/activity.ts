import type { Role } from "./config.js";
import type { CallRecord } from "./fetch.js";

/** A model call on its way: who asked, of which endpoint, since when. */
export interface ModelCallActivity {
  role: Role;
  /** Who asked, shown in the notices: the role, or an agent using its model (decomposer, sql). */
  speaker?: string;
  model: string;
  /** The endpoint's host and port, e.g. 127.0.0.1:8000 (never its path, key or user). */
  host: string;
  /** performance.now() when the call started. */
  startedAt: number;
  /** The HTTP requests made so far (retries included). */
  record: Readonly<CallRecord>;
}

const inFlight = new Set<ModelCallActivity>();

/** Runs `fn` as a model call in flight, so slow calls can be reported while they wait. */
export async function trackModelCall<T>(
  activity: ModelCallActivity,
  fn: () => Promise<T>,
): Promise<T> {
  inFlight.add(activity);
  try {
    return await fn();
  } finally {
    inFlight.delete(activity);
  }
}

export function modelCallsInFlight(): readonly ModelCallActivity[] {
  return [...inFlight];
}

/** The host of a base URL, without credentials or path. */
export function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl).host;
  } catch {
    return baseUrl;
  }
}

export interface SlowCallNotices {
  /** The first notice comes once a call has waited this long (default 5 s). */
  afterMs?: number;
  /** Then one every this long while it still waits (default 10 s). */
  everyMs?: number;
  /** Width of the role label, so notices line up with the progress lines. */
  labelWidth?: number;
  write: (line: string) => void;
}

/**
 * Writes a line for each model call that has waited `afterMs`, and again every `everyMs`,
 * e.g. `answerer  waiting 15 s for 127.0.0.1:8000 (model qwen, attempt 2)`. Returns the stop.
 */
export function reportSlowModelCalls(options: SlowCallNotices): () => void {
  const afterMs = options.afterMs ?? 5_000;
  const everyMs = options.everyMs ?? 10_000;
  const told = new WeakMap<ModelCallActivity, number>();
  const tick = () => {
    const now = performance.now();
    for (const call of inFlight) {
      const waited = now - call.startedAt;
      const next = told.get(call) ?? afterMs;
      if (waited < next) continue;
      told.set(call, next + everyMs * Math.max(1, Math.ceil((waited - next) / everyMs)));
      const attempt = call.record.attempts > 1 ? `, attempt ${call.record.attempts}` : "";
      options.write(
        `${(call.speaker ?? call.role).padEnd(options.labelWidth ?? 0)} waiting ${Math.round(waited / 1000)} s for ${call.host} (model ${call.model}${attempt})`,
      );
    }
  };
  const timer = setInterval(tick, Math.min(1_000, afterMs, everyMs));
  timer.unref();
  return () => clearInterval(timer);
}
