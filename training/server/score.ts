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
import { parseLabel } from "./label.js";
import type { Limiter } from "./limit.js";

/** A request the client got wrong: answered with a 400 and this message. */
export class BadRequest extends Error {}

export interface ScoreOptions {
  preset: Preset;
  limiter: Limiter;
  /** Code rewards' sandbox; the shared local sandbox when unset. */
  sandbox?: RewardContext["sandbox"];
  prefixMismatch: PrefixMismatch;
}

interface Job {
  preset: Preset;
  role: Role;
  sample: Parameters<typeof scoreReward>[2];
  context: RewardContext;
}

/** Checks every sample before scoring any, so a bad request costs no sandbox run. */
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
      sample: { response, reference, qtype, qsubtype, tables },
      context: { sandbox: options.sandbox, planFormat: label.planFormat },
    };
  });
}

/** extra_logs: one list per `role_part`, 0 where a sample has no such part. */
function logsOf(jobs: Job[], results: RewardResult[]): Record<string, number[]> {
  const logs: Record<string, number[]> = {};
  results.forEach((result, i) => {
    for (const [part, value] of Object.entries(result.parts)) {
      const key = `${jobs[i]?.role}_${part}`;
      logs[key] ??= new Array<number>(results.length).fill(0);
      logs[key][i] = value;
    }
  });
  return logs;
}

/** Scores every sample of a request, each through the limiter. */
export async function scoreRequest(
  request: RewardRequest,
  route: Role | undefined,
  options: ScoreOptions,
): Promise<RewardResponse> {
  const jobs = jobsOf(request, route, options);
  const results = await Promise.all(
    jobs.map((job) =>
      options.limiter.run(() => scoreReward(job.preset, job.role, job.sample, job.context)),
    ),
  );
  const rewards = results.map((r) => r.reward);
  return { rewards, scores: [...rewards], extra_logs: logsOf(jobs, results) };
}
