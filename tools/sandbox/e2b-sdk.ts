import { Sandbox as CloudSandbox } from "e2b";

/**
 * The part of the `e2b` SDK the E2B backend uses, so that tests can put a fake in its
 * place. Errors are the SDK's own classes (`CommandExitError` for a non-zero exit,
 * `TimeoutError`, `SandboxNotFoundError`, `FileNotFoundError`, ...), and a fake must
 * throw the same ones.
 */
export interface E2BSdk {
  create(options: E2BCreateOptions): Promise<E2BRemoteSandbox>;
}

export interface E2BCreateOptions {
  apiKey: string;
  /** Self-hosted E2B; undefined: the SDK's default (E2B's cloud). */
  domain?: string;
  /** Template name or id; undefined: the SDK's default template ("base"). */
  template?: string;
  /** How long E2B keeps the sandbox alive unless `setTimeout` extends it. */
  timeoutMs: number;
  /** Bound of every HTTP request the SDK makes, the creation included. */
  requestTimeoutMs: number;
  allowInternetAccess: boolean;
  metadata: Record<string, string>;
}

export interface E2BRunOptions {
  /** The command is stopped, and `TimeoutError` thrown, once it runs this long. */
  timeoutMs: number;
  cwd?: string;
  envs?: Record<string, string>;
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
    write(path: string, data: string | Uint8Array): Promise<unknown>;
    /** Throws `FileNotFoundError` for a missing file. */
    read(path: string): Promise<Uint8Array>;
  };
  readonly commands: {
    /** Throws `CommandExitError` (with exitCode, stdout, stderr) on a non-zero exit. */
    run(command: string, options: E2BRunOptions): Promise<E2BCommandOutput>;
  };
  /** Keeps the sandbox alive `timeoutMs` from now. */
  setTimeout(timeoutMs: number): Promise<void>;
  kill(): Promise<unknown>;
}

/** The real SDK, talking to E2B (or a self-hosted E2B at `domain`). */
export const cloudE2BSdk: E2BSdk = {
  async create(options) {
    const sandbox = await CloudSandbox.create({
      apiKey: options.apiKey,
      domain: options.domain,
      template: options.template,
      timeoutMs: options.timeoutMs,
      requestTimeoutMs: options.requestTimeoutMs,
      allowInternetAccess: options.allowInternetAccess,
      metadata: options.metadata,
    });
    const request = { requestTimeoutMs: options.requestTimeoutMs };
    return {
      sandboxId: sandbox.sandboxId,
      files: {
        write: (path, data) =>
          sandbox.files.write(
            path,
            // A copy into a plain ArrayBuffer: the SDK takes no typed-array views.
            typeof data === "string" ? data : new Uint8Array(data).buffer,
            request,
          ),
        read: (path) => sandbox.files.read(path, { ...request, format: "bytes" }),
      },
      commands: {
        run: (command, runOptions) =>
          sandbox.commands.run(command, { ...runOptions, ...request, background: false }),
      },
      setTimeout: (timeoutMs) => sandbox.setTimeout(timeoutMs, request),
      kill: () => sandbox.kill(request),
    };
  },
};
