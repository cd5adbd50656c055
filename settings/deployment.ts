import { z } from "zod";
import { blank } from "./env-values.js";

/*
 * Where a deployment keeps what outlives a process, from the environment: each unset setting
 * keeps the one-machine default (SQLite files and the artifact folder in TABLEMINDS_HOME, one
 * process). docs/deploy.md shows which to set for a team server and for a cluster.
 */

const PostgresUrl = z
  .string()
  .regex(/^postgres(ql)?:\/\//, "TABLEMINDS_DATABASE_URL: expected postgres://user@host:port/db");
const RedisUrl = z
  .string()
  .regex(/^rediss?:\/\//, "TABLEMINDS_QUEUE_URL: expected redis://host:port");
const ArtifactStore = z
  .string()
  .regex(
    /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/,
    "TABLEMINDS_ARTIFACT_STORE: expected s3://bucket[/prefix]",
  );

export const DeploymentEnvSchema = z.object({
  /** Checkpoints, long-term memory and the server's threads in PostgreSQL instead of SQLite. */
  TABLEMINDS_DATABASE_URL: z.preprocess(blank, PostgresUrl.optional()),
  /** Tables in an S3-compatible object store (AWS_ENDPOINT_URL and the AWS_* keys reach it). */
  TABLEMINDS_ARTIFACT_STORE: z.preprocess(blank, ArtifactStore.optional()),
  /** A Redis that `eval --queue` and `mine --queue` share with `tableminds consume` processes. */
  TABLEMINDS_QUEUE_URL: z.preprocess(blank, RedisUrl.optional()),
  /**
   * The secret that signs the queue's jobs and results: the same where jobs are submitted and
   * where consumers run, so a job or result written to Redis by anyone else is refused.
   */
  TABLEMINDS_QUEUE_KEY: z.preprocess(
    blank,
    z
      .string()
      .min(32, "TABLEMINDS_QUEUE_KEY: at least 32 characters (`openssl rand -hex 24` makes one)")
      .optional(),
  ),
});
export type DeploymentSettings = z.infer<typeof DeploymentEnvSchema>;

/** The deployment settings of the environment; a malformed one throws its one-line message. */
export function deploymentSettings(env: NodeJS.ProcessEnv = process.env): DeploymentSettings {
  const parsed = DeploymentEnvSchema.safeParse(env);
  if (parsed.success) return parsed.data;
  throw new Error(parsed.error.issues.map((issue) => issue.message).join("; "));
}
