import { readFileSync } from "node:fs";
import { request } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { serve } from "@hono/node-server";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocalServer, type LocalServer } from "../../server/local.js";
import { EXAMPLES, useStubEndpoint, useTempHome } from "../support/env.js";
import { MEDALS_QUESTION, medalsTeam } from "../support/scripts.js";
import { type StubServer, startStubOpenAI } from "../support/stub-openai.js";

/*
 * One machine's LangGraph API (`tableminds ui`'s): every graph on the embeddable server over the
 * SQLite files of TABLEMINDS_HOME, with no PostgreSQL. An uploaded table is answered over, and
 * the thread is there again once the server has been started anew.
 */

describe("the local LangGraph API", () => {
  let stub: StubServer;
  let server: LocalServer;
  let listening: ReturnType<typeof serve>;
  let url: string;

  async function start(): Promise<void> {
    server = await createLocalServer();
    listening = await new Promise((resolve) => {
      const started = serve({ fetch: server.app.fetch, hostname: "127.0.0.1", port: 0 }, () =>
        resolve(started),
      );
    });
    url = `http://127.0.0.1:${(listening.address() as AddressInfo).port}`;
  }

  async function stop(): Promise<void> {
    await new Promise((resolve) => listening.close(resolve));
    await server.close();
  }

  beforeAll(async () => {
    useTempHome();
    const team = medalsTeam();
    stub = await startStubOpenAI({ respond: (req) => team(req) });
    useStubEndpoint(stub.url);
    await start();
  }, 120_000);

  afterAll(async () => {
    await stop();
    await stub?.close();
  });

  it("answers over an uploaded table, and keeps the thread across a restart", async () => {
    const bytes = readFileSync(path.join(EXAMPLES, "olympics_2020_medals.csv"));
    const upload = await fetch(`${url}/tables?name=olympics_2020_medals.csv`, {
      method: "POST",
      body: bytes,
    });
    expect(upload.status).toBe(201);
    const { source } = (await upload.json()) as { source: { upload: string; name: string } };
    const client = new Client({ apiUrl: url });
    const thread = await client.threads.create({ metadata: { title: "medals" } });
    const values = (await client.runs.wait(thread.thread_id, "table_qa", {
      input: { question: MEDALS_QUESTION, sources: [source] },
    })) as { answer?: { final: string } };
    expect(values.answer?.final).toBe("203");

    await stop();
    await start();
    const again = new Client({ apiUrl: url });
    const listed = await again.threads.search({ metadata: { title: "medals" } });
    expect(listed.map((t) => t.thread_id)).toEqual([thread.thread_id]);
    const state = await again.threads.getState(thread.thread_id);
    expect((state.values as { answer?: { final: string } }).answer?.final).toBe("203");
  }, 120_000);

  it("answers on loopback only: a request to another host name is refused", async () => {
    const { port } = new URL(url);
    const statusFor = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const req = request(
          { host: "127.0.0.1", port, path: "/threads/search", method: "POST", headers: { host } },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        req.on("error", reject);
        req.end("{}");
      });
    expect(await statusFor(`127.0.0.1:${port}`)).toBe(200);
    // A page on another name that resolves here (DNS rebinding) is not served.
    expect(await statusFor("tableminds.example")).toBe(403);
  });
});
