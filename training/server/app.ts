import { type Context, Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { createMiddleware } from "hono/factory";
import { HTTPException } from "hono/http-exception";
import { ROLES, type Role } from "../rewards/index.js";
import { bearerOf, tokenRefusal } from "./auth.js";
import { RewardRequestSchema } from "./contract.js";
import { BadRequest, type ScoreOptions, scoreRequest } from "./score.js";

export interface RewardAppOptions extends ScoreOptions {
  token: string;
  /** Largest request body accepted, in bytes. */
  bodyLimitBytes: number;
}

export const bodyTooLarge = (limit: number) => `body larger than ${limit} bytes`;

const isRole = (value: string): value is Role => (ROLES as readonly string[]).includes(value);

/** The reward server's routes: GET /health, POST /reward and POST /reward/{plan|code|answer}. */
export function createRewardApp(options: RewardAppOptions): Hono {
  const app = new Hono();

  const { plan, code, answer } = options.limiters;
  app.get("/health", (c) =>
    c.json({
      ok: true,
      preset: options.preset,
      concurrency: { plan: plan.size, code: code.size, answer: answer.size },
    }),
  );

  // Bearer header; `?token=` for clients that cannot set headers (OpenRLHF's remote client).
  // The server's gate (gate.ts) checks the same before reading a body; this holds for the app
  // used without it.
  const auth = createMiddleware(async (c, next) => {
    const given = bearerOf(c.req.header("authorization")) ?? c.req.query("token");
    const refusal = tokenRefusal(given, options.token);
    if (refusal) {
      return c.json({ error: refusal }, 401, { "WWW-Authenticate": "Bearer", Connection: "close" });
    }
    await next();
  });
  app.use("/reward", auth);
  app.use("/reward/*", auth);

  const limit = bodyLimit({
    maxSize: options.bodyLimitBytes,
    // The connection closes after the 413, so the rest of the body is never read.
    onError: (c) =>
      c.json({ error: bodyTooLarge(options.bodyLimitBytes) }, 413, { Connection: "close" }),
  });

  const handle = (route: Role | undefined) => async (c: Context) => {
    let body: unknown;
    try {
      body = JSON.parse(await c.req.text());
    } catch {
      throw new BadRequest("body is not valid JSON");
    }
    const parsed = RewardRequestSchema.safeParse(body);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new BadRequest(`${issue?.path.join(".") || "body"}: ${issue?.message ?? "invalid"}`);
    }
    return c.json(await scoreRequest(parsed.data, route, options));
  };

  app.post("/reward", limit, handle(undefined));
  app.post("/reward/:role", limit, async (c) => {
    const role = c.req.param("role");
    if (!isRole(role)) throw new BadRequest(`unknown role ${role} (known: ${ROLES.join(", ")})`);
    return handle(role)(c);
  });

  app.notFound((c) => c.json({ error: `no route ${c.req.method} ${c.req.path}` }, 404));
  app.onError((error, c) => {
    if (error instanceof BadRequest) return c.json({ error: error.message }, 400);
    if (error instanceof HTTPException) return c.json({ error: error.message }, error.status);
    return c.json({ error: `reward failed: ${error.message}` }, 500);
  });
  return app;
}
