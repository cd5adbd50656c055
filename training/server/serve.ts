import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { createRewardApp, type RewardAppOptions } from "./app.js";
import { Limiter } from "./limit.js";
import type { ScoreOptions } from "./score.js";

export interface RewardServerOptions extends Omit<RewardAppOptions, "limiter"> {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Reward computations running at once. */
  concurrency: number;
}

export interface RewardServer {
  url: string;
  port: number;
  /** Bounds the reward computations (its peak shows the most that ran at once). */
  limiter: Limiter;
  /** Stops accepting, lets running requests finish, then resolves. */
  close: () => Promise<void>;
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Starts the reward server and resolves once it listens. */
export async function startRewardServer(options: RewardServerOptions): Promise<RewardServer> {
  const limiter = new Limiter(options.concurrency);
  const scoring: ScoreOptions = { ...options, limiter };
  const app = createRewardApp({ ...options, ...scoring });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const started = serve({ fetch: app.fetch, hostname: options.host, port: options.port }, () =>
      resolve(started),
    );
    started.once("error", reject);
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    limiter,
    close: () => {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Idle keep-alive sockets would hold close() open; busy ones finish their request.
        if ("closeIdleConnections" in server) server.closeIdleConnections();
      });
      return closing;
    },
  };
}
