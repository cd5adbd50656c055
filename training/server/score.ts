import type { TableRef } from "../../blackboard/schemas.js";
import {
  type Preset,
  type RewardContext,
  type RewardResult,
  type Role,
  scoreReward,
} from "../rewards/index.js";
import {
  lengthMismatch,
  type PrefixMismatch,
  type RewardRequest,
  type RewardResponse,
  responseOf,
} from "./contract.js";
import { type LabelTable, parseLabel } from "./label.js";
import type { Limiter } from "./limit.js";
import { TableRefused, type TableStore } from "./tables.js";

/** A request the client got wrong: answered with a 400 and this message. */
export class BadRequest extends Error {}

/** One limiter per role: cheap rewards never wait behind sandbox runs. */
export type RoleLimiters = Record<Role, Limiter>;

export interface ScoreOptions {
  preset: Preset;
  limiters: RoleLimiters;
  /** Where code rewards' tables come from: the server's verified artifact store. */
  tables: TableStore;
  /** Code rewards' sandbox; the shared local sandbox when unset. */
  sandbox?: RewardContext["sandbox"];
  prefixMismatch: PrefixMismatch;
  /** Told each sample refused for its tables (the CLI writes it to stderr). */
  onRefused?: (message: string) => void;
}

interface Job {
  preset: Preset;
  role: Role;
  response: string;
  reference: string;
  qtype?: string;
  qsubtype?: string;
  /** The label's tables, not yet resolved against the store. */
  tables: LabelTable[];
  context: RewardContext;
}

/** Checks the shape of every sample before scoring any, so a bad request costs no sandbox run. */
function jobsOf(request: RewardRequest, route: Role | undefined, options: ScoreOptions): Job[] {
  const mismatch = lengthMismatch(request);
  if (mismatch) throw new BadRequest(mismatch);
  return request.query.map((query, i) => {
    let label: ReturnType<typeof parseLabel>;
    let response: string;
    try {
      label = parseLabel(request.labels[i] ?? "", i);
      response = responseOf(query, request.prompts?.[i], i, options.prefixMismatch);
    } catch (error) {
      throw new BadRequest((error as Error).message);
    }
    const role = route ?? label.role;
    if (!role) throw new BadRequest(`labels[${i}] has no role and the route names none`);
    if (route && label.role && label.role !== route) {
      throw new BadRequest(`labels[${i}].role is ${label.role} but the route is /reward/${route}`);
    }
    const { reference, qtype, qsubtype, tables } = label;
    return {
      preset: label.preset ?? options.preset,
      role,
      response,
      reference,
      qtype,
      qsubtype,
      tables,
      context: { sandbox: options.sandbox, planFormat: label.planFormat },
    };
  });
}

/**
 * The job's tables from the store, or why they are refused. Only code rewards read tables;
 * the other roles ignore them and never touch the store.
 */
async function tablesOf(
  job: Job,
  index: number,
  store: TableStore,
): Promise<TableRef[] | TableRefused> {
  if (job.role !== "code") return [];
  try {
    return await store.resolve(job.tables, `labels[${index}]`);
  } catch (error) {
    if (error instanceof TableRefused) return error;
    throw error;
  }
}

/** extra_logs: one list per `role_part`, 0 where a sample has no such part. */
function logsOf(jobs: Job[], results: (RewardResult | null)[]): Record<string, number[]> {
  const logs: Record<string, number[]> = {};
  results.forEach((result, i) => {
    for (const [part, value] of Object.entries(result?.parts ?? {})) {
      const key = `${jobs[i]?.role}_${part}`;
      logs[key] ??= new Array<number>(results.length).fill(0);
      logs[key][i] = value;
    }
  });
  return logs;
}

/**
 * Scores every sample of a request, each through its role's limiter. A sample whose tables
 * are refused scores 0 and says why in `errors`; the others are scored all the same.
 */
export async function scoreRequest(
  request: RewardRequest,
  route: Role | undefined,
  options: ScoreOptions,
): Promise<RewardResponse> {
  const jobs = jobsOf(request, route, options);
  const tables = await Promise.all(jobs.map((job, i) => tablesOf(job, i, options.tables)));
  const results = await Promise.all(
    jobs.map((job, i) => {
      const resolved = tables[i];
      if (!Array.isArray(resolved)) return null;
      const { response, reference, qtype, qsubtype } = job;
      const sample = { response, reference, qtype, qsubtype, tables: resolved };
      return options.limiters[job.role].run(() =>
        scoreReward(job.preset, job.role, sample, job.context),
      );
    }),
  );
  const rewards = results.map((r) => r?.reward ?? 0);
  const reply: RewardResponse = {
    rewards,
    scores: [...rewards],
    extra_logs: logsOf(jobs, results),
  };
  const errors = tables.map((t) => (t instanceof TableRefused ? t.message : null));
  if (errors.some((e) => e !== null)) {
    reply.errors = errors;
    for (const error of errors) if (error) options.onRefused?.(error);
  }
  return reply;
}
