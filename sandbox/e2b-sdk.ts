import { Sandbox as CloudSandbox } from "e2b";
import { forgetSandbox, rememberPool, rememberSandbox } from "./e2b-reaper.js";

/**
 * The part of the `e2b` SDK the E2B backend uses, so that tests can put a fake in its
 * place. Errors are the SDK's own classes (`CommandExitError` for a non-zero exit,
 * `TimeoutError`, `SandboxNotFoundError`, `FileNotFoundError`, `RateLimitError`, ...),
 * and a fake must throw the same ones.
 */
export interface E2BSdk {
  create(options: E2BCreateOptions): Promise<E2BRemoteSandbox>;
  /** Ids of the running sandboxes whose metadata has every given pair. */
  list(connection: E2BConnection, metadata: Record<string, string>): Promise<string[]>;
  /** Kills a sandbox by id; false when it was not found. */
  killById(connection: E2BConnection, sandboxId: string): Promise<boolean>;
}

/** Where and as whom the SDK talks to E2B. */
export interface E2BConnection {
  apiKey: string;
  /** Self-hosted E2B; undefined: the SDK's default (E2B's cloud). */
  domain?: string;
  /** Override the API and envd addresses (default: derived from the domain). */
  apiUrl?: string;
  sandboxUrl?: string;
  /** Bound of every HTTP request the SDK makes, the creation included. */
  requestTimeoutMs: number;
}

export interface E2BCreateOptions extends E2BConnection {
  /** Template name or id. */
  template: string;
  /** How long E2B keeps the sandbox alive, from its creation, unless `setTimeout` changes it. */
  timeoutMs: number;
  allowInternetAccess: boolean;
  metadata: Record<string, string>;
}

export interface E2BRunOptions {
  /** The command is stopped, and `TimeoutError` thrown, once it runs this long. */
  timeoutMs: number;
  cwd?: string;
  envs?: Record<string, string>;
}

export interface E2BTransferOptions {
  /** Bound of this one request (the SDK's requestTimeoutMs). */
  timeoutMs: number;
  /** Aborts the request in the SDK. */
  signal?: AbortSignal;
  /** Compress the body (writes) or ask for a compressed answer (reads). */
  gzip?: boolean;
}

export interface E2BCommandOutput {
  exitCode: number;
  stdout: string;
  stderr: string;
}

export interface E2BRemoteSandbox {
  readonly sandboxId: string;
  readonly files: {
    /** Creates missing parent directories, overwrites an existing file. */
    write(path: string, data: string | Uint8Array, options: E2BTransferOptions): Promise<unknown>;
    /** Throws `FileNotFoundError` for a missing file. */
    read(path: string, options: E2BTransferOptions): Promise<Uint8Array>;
  };
  readonly commands: {
    /**
     * Runs `bash -l -c command` as the sandbox's user. Throws `CommandExitError` (with
     * exitCode, stdout, stderr) on a non-zero exit; E2B reports -1 for a shell killed by a
     * signal. At its timeout E2B kills the shell only, not what it started.
     */
    run(command: string, options: E2BRunOptions): Promise<E2BCommandOutput>;
  };
  /** Keeps the sandbox alive `timeoutMs` from now (within the plan's maximum lifetime). */
  setTimeout(timeoutMs: number): Promise<void>;
  kill(): Promise<unknown>;
}

function connectionOptions(connection: E2BConnection) {
  return {
    apiKey: connection.apiKey,
    domain: connection.domain,
    apiUrl: connection.apiUrl,
    sandboxUrl: connection.sandboxUrl,
    requestTimeoutMs: connection.requestTimeoutMs,
  };
}

function plainBuffer(data: string | Uint8Array): string | ArrayBuffer {
  // A copy into a plain ArrayBuffer: the SDK takes no typed-array views.
  return typeof data === "string" ? data : new Uint8Array(data).buffer;
}

/** The real SDK, talking to E2B (or a self-hosted E2B at `domain`, or `apiUrl`). */
export const cloudE2BSdk: E2BSdk = {
  async create(options) {
    const connection = connectionOptions(options);
    // Until the pool has listed what its creates left behind, the exit hook will.
    if (options.metadata.pool) rememberPool(options, options.metadata.pool);
    const sandbox = await CloudSandbox.create({
      ...connection,
      template: options.template,
      timeoutMs: options.timeoutMs,
      allowInternetAccess: options.allowInternetAccess,
      metadata: options.metadata,
    });
    // Killed on exit unless it is killed first (see e2b-reaper.ts).
    rememberSandbox(options, sandbox.sandboxId);
    const short = { requestTimeoutMs: options.requestTimeoutMs };
    return {
      sandboxId: sandbox.sandboxId,
      files: {
        write: (path, data, { timeoutMs, signal, gzip }) =>
          sandbox.files.write(path, plainBuffer(data), {
            requestTimeoutMs: timeoutMs,
            signal,
            gzip,
          }),
        read: (path, { timeoutMs, signal, gzip }) =>
          sandbox.files.read(path, { requestTimeoutMs: timeoutMs, signal, gzip, format: "bytes" }),
      },
      commands: {
        run: (command, runOptions) =>
          sandbox.commands.run(command, { ...runOptions, ...short, background: false }),
      },
      setTimeout: (timeoutMs) => sandbox.setTimeout(timeoutMs, short),
      kill: async () => {
        const killed = await sandbox.kill(short);
        forgetSandbox(sandbox.sandboxId);
        return killed;
      },
    };
  },
  async list(connection, metadata) {
    const paginator = CloudSandbox.list({
      ...connectionOptions(connection),
      query: { metadata, state: ["running", "paused"] },
    });
    const ids: string[] = [];
    while (paginator.hasNext) {
      for (const sandbox of await paginator.nextItems()) ids.push(sandbox.sandboxId);
    }
    return ids;
  },
  async killById(connection, sandboxId) {
    const killed = await CloudSandbox.kill(sandboxId, connectionOptions(connection));
    forgetSandbox(sandboxId);
    return killed;
  },
};
