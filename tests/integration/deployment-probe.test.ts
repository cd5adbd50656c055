import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deploymentBroken,
  deploymentDoctorLines,
  deploymentFacts,
} from "../../cli/deployment-probe.js";
import { migrateDatabase } from "../../graphs/persistence-postgres.js";
import { LEDGER_MIGRATIONS } from "../../server/ledger.js";
import { freePort } from "../support/dev-server.js";
import { type Service, startService } from "../support/services.js";

describe("the doctor's deployment facts", () => {
  let postgres: Service;

  beforeAll(() => {
    postgres = startService("postgres");
  });

  afterAll(() => postgres?.stop());

  it("says SQLite and the local folder when nothing is set", async () => {
    const facts = await deploymentFacts({});
    expect(facts.database).toBeUndefined();
    const lines = deploymentDoctorLines(facts).join("\n");
    expect(lines).toContain("SQLite files in");
    expect(lines).toContain("none: they run in their own process");
    expect(deploymentBroken(facts)).toBe(false);
  });

  it("probes a real PostgreSQL: answers, then migrated once `db migrate` has run", async () => {
    const url = postgres.env.TABLEMINDS_DATABASE_URL ?? "";
    const before = await deploymentFacts({ TABLEMINDS_DATABASE_URL: url });
    expect(before.database).toMatchObject({ reachable: true, migrated: false });
    await migrateDatabase(url, [LEDGER_MIGRATIONS]);
    const after = await deploymentFacts({ TABLEMINDS_DATABASE_URL: url });
    expect(after.database).toMatchObject({ reachable: true, migrated: true });
    expect(deploymentDoctorLines(after).join("\n")).toContain("answers; schema migrated");
    expect(deploymentBroken(after)).toBe(false);
  });

  it("reports a database that does not answer, and a malformed setting, as problems", async () => {
    const port = await freePort();
    const down = await deploymentFacts({
      TABLEMINDS_DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
    });
    expect(down.database?.reachable).toBe(false);
    expect(deploymentBroken(down)).toBe(true);
    expect(deploymentDoctorLines(down).join("\n")).toContain("DOES NOT ANSWER");
    const malformed = await deploymentFacts({ TABLEMINDS_DATABASE_URL: "mysql://x" });
    expect(malformed.problem).toContain("TABLEMINDS_DATABASE_URL: expected postgres://");
    expect(deploymentBroken(malformed)).toBe(true);
  });
});
