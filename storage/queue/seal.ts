import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import { deploymentSettings } from "../../settings/deployment.js";

/*
 * Jobs and results travel sealed: the JSON text as written and an HMAC-SHA256 over what it is
 * (a job of this kind and id, or the result of this job) under TABLEMINDS_QUEUE_KEY. Anyone
 * who can write to Redis but does not hold the key can neither make a consumer run a job nor
 * make a submitter record a result; a sealed job or result moved to another id is refused too.
 */

export const SealedSchema = z.object({ body: z.string(), mac: z.string().regex(/^[0-9a-f]{64}$/) });
export type Sealed = z.infer<typeof SealedSchema>;

export class QueueSealError extends Error {
  override name = "QueueSealError";
}

/** The queue's key; without one, nothing is submitted and no consumer starts. */
export function queueKey(env: NodeJS.ProcessEnv = process.env): string {
  const key = deploymentSettings(env).TABLEMINDS_QUEUE_KEY;
  if (key === undefined) {
    throw new Error(
      "no queue key: set TABLEMINDS_QUEUE_KEY to the same secret where jobs are submitted and where consumers run (`openssl rand -hex 24` makes one)",
    );
  }
  return key;
}

/** What a seal is bound to: a job by its kind and id, or the result of a job by its id. */
export const jobLabel = (kind: string, id: string) => `job\n${kind}\n${id}`;
export const resultLabel = (id: string) => `result\n${id}`;

const macOf = (key: string, label: string, body: string) =>
  createHmac("sha256", key).update(`${label}\n`).update(body).digest("hex");

export function seal(key: string, label: string, value: unknown): Sealed {
  const body = JSON.stringify(value);
  return { body, mac: macOf(key, label, body) };
}

/** The value a seal holds, or a QueueSealError when it was not made with `key` for `label`. */
export function unseal(key: string, label: string, sealed: unknown): unknown {
  const parsed = SealedSchema.safeParse(sealed);
  if (!parsed.success) throw new QueueSealError("not sealed with the queue's key");
  const { body, mac } = parsed.data;
  const expected = Buffer.from(macOf(key, label, body), "hex");
  if (!timingSafeEqual(expected, Buffer.from(mac, "hex"))) {
    throw new QueueSealError("its seal does not match the queue's key (TABLEMINDS_QUEUE_KEY)");
  }
  return JSON.parse(body);
}

/** What a sealed job says it is, unchecked: for log lines only. */
export function peek(sealed: unknown): unknown {
  const parsed = SealedSchema.safeParse(sealed);
  if (!parsed.success) return undefined;
  try {
    return JSON.parse(parsed.data.body);
  } catch {
    return undefined;
  }
}
