/** The E2B backend's options, checked and completed with their defaults. */
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { servicesSettings } from "../settings/services.js";
import { E2BConfigError, withDeadline } from "./e2b-errors.js";
import { cloudE2BSdk, type E2BCreateOptions, type E2BSdk } from "./e2b-sdk.js";
import { chooseTemplate, describeTemplateChoice, type TemplateSource } from "./e2b-template.js";

const HERE = (name: string) => fileURLToPath(new URL(`./${name}`, import.meta.url));

export { DEFAULT_TEMPLATE, DEFAULT_TEMPLATE_CONTENTS } from "./e2b-template.js";

/** The Hobby plan's limit: E2B kills every sandbox one hour after its creation. */
export const DEFAULT_MAX_LIFETIME_MS = 60 * 60_000;

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

/** Time as the backend sees it; tests pass a fake one. */
export interface E2BClock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realClock: E2BClock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

export interface E2BSandboxOptions {
  /** Default: E2B_API_KEY. */
  apiKey?: string;
  /** A self-hosted E2B; default: E2B_DOMAIN, else E2B's cloud. */
  domain?: string;
  /** Where the SDK sends API and envd requests (default: derived from the domain). */
  apiUrl?: string;
  sandboxUrl?: string;
  /**
   * A template with python3 and pandas; default: E2B_TEMPLATE, else E2B's code
   * interpreter template. Each new sandbox is checked, and refused without pandas.
   */
  template?: string;
  /** Sandboxes kept and reused within the run (default 2). */
  poolSize?: number;
  /** A fresh sandbox for every request, killed after it (default: E2B_SANDBOX_PER_REQUEST=1, else false). */
  sandboxPerRequest?: boolean;
  /** Default: the real `e2b` SDK; tests pass a fake. */
  sdk?: E2BSdk;
  /** Further tries after a failed sandbox start (default 8), all within `startWindowMs`. */
  startRetries?: number;
  /** Upper bound of the first retry's wait, doubled each time up to `backoffCapMs` (default 1 s). */
  backoffMs?: number;
  /** Longest wait between two starts (default 30 s). */
  backoffCapMs?: number;
  /** No new start attempt once this long has passed since the first (default 3 min). */
  startWindowMs?: number;
  /** How long E2B keeps an unused sandbox (default 5 min), counted from its creation. */
  sandboxTimeoutMs?: number;
  /** Longest extension asked in one keep-alive, beyond what the command needs (default 15 min). */
  keepAliveCapMs?: number;
  /** The plan's longest sandbox life from creation (default 1 h, Hobby; Pro allows 24 h). */
  maxLifetimeMs?: number;
  /** Life a sandbox must have left past the end of a command (default 30 s). */
  lifetimeMarginMs?: number;
  /** Bound of one sandbox creation (default 60 s). */
  createTimeoutMs?: number;
  /** Bound of every SDK call but the run itself and large transfers (default 30 s). */
  requestTimeoutMs?: number;
  /** Slowest transfer rate allowed for, which scales upload and download deadlines (default 256 KiB/s). */
  minBytesPerSecond?: number;
  /** Uploads at least this large are sent gzip-compressed (default 64 KiB). */
  gzipMinBytes?: number;
  /** How long past the request's timeout the runner may take (default 5 s). */
  graceMs?: number;
  /** Memory left to the VM's own processes below the address-space limit (default 256 MB). */
  memoryReserveMb?: number;
  /** Let code reach the internet (default false). */
  allowInternet?: boolean;
  /** Where info() sends an HTTP request that needs an answer, and how long it waits for one (default 1.1.1.1:80, 5 s). */
  networkProbe?: { host: string; port: number; answerMs?: number };
  /** The runner uploaded to each sandbox (default: runner.py next to this file). */
  runnerPath?: string;
  clock?: E2BClock;
  /** A number in [0, 1), for the jitter of retries (default Math.random). */
  random?: () => number;
}

const positive = (name: string) =>
  z.number({ error: `${name} must be a number` }).refine((n) => Number.isFinite(n) && n > 0, {
    error: `${name} must be a number > 0`,
  });
const atLeastZero = (name: string) =>
  z.number({ error: `${name} must be a number` }).refine((n) => Number.isFinite(n) && n >= 0, {
    error: `${name} must be a number >= 0`,
  });

const NumbersSchema = z.object({
  poolSize: positive("poolSize").default(2),
  startRetries: atLeastZero("startRetries").default(8),
  backoffMs: atLeastZero("backoffMs").default(1_000),
  backoffCapMs: atLeastZero("backoffCapMs").default(30_000),
  startWindowMs: atLeastZero("startWindowMs").default(180_000),
  sandboxTimeoutMs: positive("sandboxTimeoutMs").default(5 * 60_000),
  keepAliveCapMs: positive("keepAliveCapMs").default(15 * 60_000),
  maxLifetimeMs: positive("maxLifetimeMs").default(DEFAULT_MAX_LIFETIME_MS),
  lifetimeMarginMs: atLeastZero("lifetimeMarginMs").default(30_000),
  createTimeoutMs: positive("createTimeoutMs").default(60_000),
  requestTimeoutMs: positive("requestTimeoutMs").default(30_000),
  minBytesPerSecond: positive("minBytesPerSecond").default(256 * 1024),
  gzipMinBytes: atLeastZero("gzipMinBytes").default(64 * 1024),
  graceMs: atLeastZero("graceMs").default(5_000),
  memoryReserveMb: atLeastZero("memoryReserveMb").default(256),
});
type Numbers = z.output<typeof NumbersSchema>;

export interface E2BSettings extends Numbers {
  sdk: E2BSdk;
  create: E2BCreateOptions & { template: string };
  templateSource: TemplateSource;
  sandboxPerRequest: boolean;
  networkProbe: { host: string; port: number; answerMs?: number };
  runnerPath: string;
  /** The Python files uploaded next to the runner (lineage, hardening, read rules, the wrapper). */
  helperPaths: string[];
  clock: E2BClock;
  random: () => number;
}

function numbers(opts: E2BSandboxOptions): Numbers {
  const picked = Object.fromEntries(
    Object.keys(NumbersSchema.shape).map((key) => [key, opts[key as keyof E2BSandboxOptions]]),
  );
  const parsed = NumbersSchema.safeParse(picked);
  if (!parsed.success) {
    throw new E2BConfigError(parsed.error.issues.map((issue) => issue.message).join("; "));
  }
  const checked = parsed.data;
  if (checked.sandboxTimeoutMs > checked.maxLifetimeMs) {
    throw new E2BConfigError(
      `sandboxTimeoutMs (${checked.sandboxTimeoutMs}) cannot exceed maxLifetimeMs (${checked.maxLifetimeMs})`,
    );
  }
  return {
    ...checked,
    poolSize: Math.floor(checked.poolSize),
    startRetries: Math.floor(checked.startRetries),
  };
}

export function resolveSettings(opts: E2BSandboxOptions): E2BSettings {
  const services = servicesSettings();
  const apiKey = (opts.apiKey ?? services.E2B_API_KEY ?? "").trim();
  if (!apiKey) throw new E2BConfigError(MISSING_KEY_MESSAGE);
  const domain = opts.domain ?? services.E2B_DOMAIN;
  const { template, source: templateSource } = chooseTemplate(opts.template, services);
  const checked = numbers(opts);
  return {
    ...checked,
    sdk: opts.sdk ?? cloudE2BSdk,
    create: {
      apiKey,
      domain,
      apiUrl: opts.apiUrl,
      sandboxUrl: opts.sandboxUrl,
      template,
      timeoutMs: checked.sandboxTimeoutMs,
      requestTimeoutMs: checked.createTimeoutMs,
      allowInternetAccess: opts.allowInternet ?? false,
      metadata: { app: "tableminds" },
    },
    templateSource,
    sandboxPerRequest: opts.sandboxPerRequest ?? services.E2B_SANDBOX_PER_REQUEST ?? false,
    networkProbe: opts.networkProbe ?? { host: "1.1.1.1", port: 80 },
    runnerPath: opts.runnerPath ?? HERE("runner.py"),
    helperPaths: [
      HERE("lineage.py"),
      HERE("figures.py"),
      HERE("chart_reading.py"),
      HERE("hardening.py"),
      HERE("read_rules.py"),
      HERE("e2b_runner.py"),
    ],
    clock: opts.clock ?? realClock,
    random: opts.random ?? Math.random,
  };
}

/** What the template is and where it came from, for `doctor` and error messages. */
export function describeTemplate(settings: Pick<E2BSettings, "create" | "templateSource">): string {
  return describeTemplateChoice(settings.create.template, settings.templateSource);
}

/** Every short SDK call goes through here: none may take longer than the request timeout (+ `extraMs`). */
export function sdkCall<T>(
  settings: E2BSettings,
  work: Promise<T>,
  what: string,
  extraMs = 0,
): Promise<T> {
  return withDeadline(work, settings.requestTimeoutMs + extraMs, what);
}

/** The deadline of a transfer of `bytes`: the request timeout plus the time at the slowest rate allowed for. */
export function transferMs(settings: E2BSettings, bytes: number): number {
  return Math.ceil(settings.requestTimeoutMs + (bytes / settings.minBytesPerSecond) * 1_000);
}
