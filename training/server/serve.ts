import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { Role } from "../rewards/index.js";
import { createRewardApp, type RewardAppOptions } from "./app.js";
import { gate } from "./gate.js";
import { Limiter } from "./limit.js";
import type { RoleLimiters } from "./score.js";
import { TableStore, type TableStoreOptions } from "./tables.js";

export interface RewardServerOptions
  extends Omit<RewardAppOptions, "limiters" | "tables">,
    TableStoreOptions {
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** Reward computations running at once, per role (each role waits only for its own). */
  concurrency: Record<Role, number>;
  /**
   * Limiters to use instead of making them from `concurrency`. The benchmark passes one
   * limiter for every role to measure what separate ones change.
   */
  limiters?: RoleLimiters;
}

export interface RewardServer {
  url: string;
  port: number;
  /** Bound each role's reward computations (their peaks show the most that ran at once). */
  limiters: RoleLimiters;
  /** The artifact store the server takes labels' tables from. */
  tables: TableStore;
  /** Stops accepting, lets running requests finish, then resolves. */
  close: () => Promise<void>;
}

export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * Code rewards run two programs in the sandbox (seconds when the code is slow); plan and
 * answer rewards are in-process string metrics (well under a millisecond each).
 */
export const DEFAULT_CONCURRENCY: Readonly<Record<Role, number>> = {
  plan: 16,
  code: 4,
  answer: 16,
};

/** Starts the reward server and resolves once it listens. */
export async function startRewardServer(options: RewardServerOptions): Promise<RewardServer> {
  const limiters: RoleLimiters = options.limiters ?? {
    plan: new Limiter(options.concurrency.plan),
    code: new Limiter(options.concurrency.code),
    answer: new Limiter(options.concurrency.answer),
  };
  const tables = new TableStore(options);
  const app = createRewardApp({ ...options, limiters, tables });
  const server = createServer(gate(getRequestListener(app.fetch), options));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(":") ? `[${options.host}]` : options.host;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    limiters,
    tables,
    close: () => {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Idle keep-alive sockets would hold close() open; busy ones finish their request.
        server.closeIdleConnections();
      });
      return closing;
    },
  };
}
