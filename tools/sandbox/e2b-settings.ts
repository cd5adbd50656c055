/** The E2B backend's options, checked and completed with their defaults. */
import { fileURLToPath } from "node:url";
import { E2BConfigError, withDeadline } from "./e2b-errors.js";
import { cloudE2BSdk, type E2BCreateOptions, type E2BSdk } from "./e2b-sdk.js";

const RUNNER_SCRIPT = fileURLToPath(new URL("./runner.py", import.meta.url));

const MISSING_KEY_MESSAGE =
  "the e2b sandbox backend needs an E2B API key: set E2B_API_KEY (and E2B_DOMAIN for a " +
  "self-hosted E2B), or pass apiKey; or use the local sandbox instead";

/** Passed to every command; nothing from this process's own environment goes along. */
export const RUN_ENV: Readonly<Record<string, string>> = {
  PYTHONIOENCODING: "utf-8",
  PYTHONDONTWRITEBYTECODE: "1",
  OMP_NUM_THREADS: "1",
  OPENBLAS_NUM_THREADS: "1",
  MKL_NUM_THREADS: "1",
};

export interface E2BSandboxOptions {
  /** Default: E2B_API_KEY. */
  apiKey?: string;
  /** A self-hosted E2B; default: E2B_DOMAIN, else E2B's cloud. */
  domain?: string;
  /**
   * A template with python3 and pandas; default: E2B_TEMPLATE, else the SDK's default
   * template. Each new sandbox is checked, and refused with E2BTemplateError without pandas.
   */
  template?: string;
  /** Sandboxes kept and reused within the run (default 2). */
  poolSize?: number;
  /** Default: the real `e2b` SDK; tests pass a fake. */
  sdk?: E2BSdk;
  /** Further tries after a failed sandbox start (default 3). */
  startRetries?: number;
  /** Wait before the first retry, doubled before each next one (default 500 ms). */
  backoffMs?: number;
  /** How long an unused sandbox stays alive in E2B (default 10 min); use extends it. */
  sandboxTimeoutMs?: number;
  /** Bound of one sandbox creation (default 60 s). */
  createTimeoutMs?: number;
  /** Bound of every other SDK call but the run itself (default 30 s). */
  requestTimeoutMs?: number;
  /** How long past the request's timeout the runner may take (default 5 s). */
  graceMs?: number;
  /** Let code reach the internet (default false). */
  allowInternet?: boolean;
  /** Where info() checks that the internet is out of reach (default 1.1.1.1:443). */
  networkProbe?: { host: string; port: number };
  /** The runner uploaded to each sandbox (default: runner.py next to this file). */
  runnerPath?: string;
}

export interface E2BSettings {
  sdk: E2BSdk;
  create: E2BCreateOptions;
  poolSize: number;
  startRetries: number;
  backoffMs: number;
  sandboxTimeoutMs: number;
  createTimeoutMs: number;
  requestTimeoutMs: number;
  graceMs: number;
  networkProbe: { host: string; port: number };
  runnerPath: string;
}

function setting(value: number | undefined, fallback: number, name: string, min = 0): number {
  const chosen = value ?? fallback;
  if (!Number.isFinite(chosen) || chosen < min) {
    throw new E2BConfigError(`${name} must be a number >= ${min}, not ${String(value)}`);
  }
  return chosen;
}

export function resolveSettings(opts: E2BSandboxOptions): E2BSettings {
  const apiKey = (opts.apiKey ?? process.env.E2B_API_KEY ?? "").trim();
  if (!apiKey) throw new E2BConfigError(MISSING_KEY_MESSAGE);
  const domain = opts.domain ?? (process.env.E2B_DOMAIN?.trim() || undefined);
  const template = opts.template ?? (process.env.E2B_TEMPLATE?.trim() || undefined);
  const sandboxTimeoutMs = setting(opts.sandboxTimeoutMs, 10 * 60_000, "sandboxTimeoutMs", 1);
  const createTimeoutMs = setting(opts.createTimeoutMs, 60_000, "createTimeoutMs", 1);
  return {
    sdk: opts.sdk ?? cloudE2BSdk,
    create: {
      apiKey,
      domain,
      template,
      timeoutMs: sandboxTimeoutMs,
      requestTimeoutMs: createTimeoutMs,
      allowInternetAccess: opts.allowInternet ?? false,
      metadata: { app: "tableminds" },
    },
    poolSize: Math.floor(setting(opts.poolSize, 2, "poolSize", 1)),
    startRetries: Math.floor(setting(opts.startRetries, 3, "startRetries")),
    backoffMs: setting(opts.backoffMs, 500, "backoffMs"),
    sandboxTimeoutMs,
    createTimeoutMs,
    requestTimeoutMs: setting(opts.requestTimeoutMs, 30_000, "requestTimeoutMs", 1),
    graceMs: setting(opts.graceMs, 5_000, "graceMs"),
    networkProbe: opts.networkProbe ?? { host: "1.1.1.1", port: 443 },
    runnerPath: opts.runnerPath ?? RUNNER_SCRIPT,
  };
}

/** Every SDK call goes through here: none may take longer than the request timeout (+ `extraMs`). */
export function sdkCall<T>(
  settings: E2BSettings,
  work: Promise<T>,
  what: string,
  extraMs = 0,
): Promise<T> {
  return withDeadline(work, settings.requestTimeoutMs + extraMs, what);
}
