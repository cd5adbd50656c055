import path from "node:path";
import { type DeploymentSettings, deploymentSettings } from "../settings/deployment.js";
import { artifactDir, tablemindsHome } from "../storage/artifacts.js";

/** Where this process keeps what outlives it, and whether the database answers. */
export interface DeploymentFacts {
  /** A setting that does not parse: its message (the rest is then unknown). */
  problem?: string;
  database?: { url: string; reachable: boolean; migrated: boolean; problem?: string };
  artifactStore?: { url: string; endpoint?: string };
  queue?: string;
  home: string;
}

const PROBE_MS = 3000;

async function probeDatabase(url: string): Promise<NonNullable<DeploymentFacts["database"]>> {
  const [{ default: pg }, { describeUrl }] = await Promise.all([
    import("pg"),
    import("../storage/postgres.js"),
  ]);
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: PROBE_MS });
  client.on("error", () => {});
  try {
    await client.connect();
    const result = await client.query<{ ledger: string | null }>(
      "SELECT to_regclass('tableminds_migrations')::text AS ledger",
    );
    return { url: describeUrl(url), reachable: true, migrated: !!result.rows[0]?.ledger };
  } catch (error) {
    return {
      url: describeUrl(url),
      reachable: false,
      migrated: false,
      problem: (error as Error).message,
    };
  } finally {
    await client.end().catch(() => {});
  }
}

export async function deploymentFacts(
  env: NodeJS.ProcessEnv = process.env,
): Promise<DeploymentFacts> {
  const home = tablemindsHome();
  let settings: DeploymentSettings;
  try {
    settings = deploymentSettings(env);
  } catch (error) {
    return { home, problem: (error as Error).message };
  }
  return {
    home,
    database: settings.TABLEMINDS_DATABASE_URL
      ? await probeDatabase(settings.TABLEMINDS_DATABASE_URL)
      : undefined,
    artifactStore: settings.TABLEMINDS_ARTIFACT_STORE
      ? { url: settings.TABLEMINDS_ARTIFACT_STORE, endpoint: env.AWS_ENDPOINT_URL }
      : undefined,
    queue: settings.TABLEMINDS_QUEUE_URL,
  };
}

/** The doctor's lines for them. */
export function deploymentDoctorLines(facts: DeploymentFacts): string[] {
  const lines = ["", "Deployment (docs/deploy.md):"];
  if (facts.problem) return [...lines, `  PROBLEM: ${facts.problem}`];
  const { database } = facts;
  lines.push(
    !database
      ? `  checkpoints, memory  SQLite files in ${facts.home}`
      : database.reachable
        ? `  checkpoints, memory  PostgreSQL ${database.url} answers; ${database.migrated ? "schema migrated" : "schema not migrated yet (tableminds db migrate, or the first use does it)"}`
        : `  checkpoints, memory  PostgreSQL ${database.url} DOES NOT ANSWER - ${database.problem}`,
  );
  lines.push(
    facts.artifactStore
      ? `  tables               ${facts.artifactStore.url}${facts.artifactStore.endpoint ? ` at ${facts.artifactStore.endpoint}` : ""}, cached in ${artifactDir()}`
      : `  tables               the folder ${path.relative(process.cwd(), artifactDir()) || artifactDir()}`,
  );
  lines.push(
    facts.queue
      ? `  eval and mine queue  ${facts.queue} (run \`tableminds consume\` where questions should run)`
      : "  eval and mine queue  none: they run in their own process",
  );
  return lines;
}

/** Whether the deployment's settings keep the CLI from working. */
export function deploymentBroken(facts: DeploymentFacts): boolean {
  return !!facts.problem || (facts.database !== undefined && !facts.database.reachable);
}
