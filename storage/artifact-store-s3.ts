import { createHash } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import path from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { GetObjectCommand, HeadObjectCommand, S3Client } from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import type { ArtifactStore } from "./artifact-store.js";
import { droppedConnection, retryWhile } from "./retry.js";

/*
 * The artifact store in an S3-compatible object store, reached with the standard AWS settings
 * (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION; path-style
 * addressing when an endpoint is given, as MinIO, SeaweedFS and Ceph want).
 *
 * Objects are written with `If-None-Match: *`, on PutObject and on CompleteMultipartUpload
 * alike, so an object is never overwritten: a 412 says it is there already, which is success,
 * since a name is the sha256 of its bytes. SeaweedFS 4.48 (the tests' server) honours the
 * header on both. A server that ignored it would let a second writer replace an object with
 * the same bytes, which changes nothing; and every fetch is checked against its name anyway.
 */

/** Files past this go up in parts of this size (S3's smallest part is 5 MiB). */
export const PART_BYTES = 8 * 1024 * 1024;
/** Parts in flight at once, per file: memory is about this many parts. */
const PARTS_AT_ONCE = 4;
/** A 409 means another conditional write of the same name was under way: asked again. */
const CONFLICT_RETRIES = 3;
/** Names this process knows the store has, so that a second put of one asks nothing. */
const MAX_KNOWN = 100_000;

function status(error: unknown): number | undefined {
  return (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/**
 * A failure the store may get over: no answer at all (refused, reset, timed out), a server
 * error or throttling. A 4xx other than 429 is the answer, not an outage.
 */
export function storeOutage(error: unknown): boolean {
  const code = status(error);
  if (code !== undefined) return code >= 500 || code === 429;
  const {
    code: errno,
    name,
    message,
  } = (error ?? {}) as {
    code?: unknown;
    name?: unknown;
    message?: unknown;
  };
  if (droppedConnection(error)) return true;
  if (typeof errno === "string" && NAME_OR_ABORT_CODES.has(errno)) return true;
  if (name === "TimeoutError") return true;
  return typeof message === "string" && NETWORK_TEXT.test(message);
}

/** Beyond a dropped connection: a name that did not resolve for now, a connection aborted. */
const NAME_OR_ABORT_CODES = new Set(["EAI_AGAIN", "ECONNABORTED"]);
const NETWORK_TEXT = /socket hang up|ECONNREFUSED|ECONNRESET|ETIMEDOUT|premature close|aborted/i;

/** How long a fetch keeps trying through an outage of the store before its run fails. */
export const FETCH_RETRY = { withinMs: 20_000, firstPauseMs: 200, maxPauseMs: 4_000 };

function problem(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split(/\r?\n/)[0] ?? message;
}

/** `s3://bucket[/prefix]` as a bucket and a key prefix without slashes at its ends. */
export function parseStoreUrl(url: string): { bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(url);
  if (!match?.[1])
    throw new Error(`TABLEMINDS_ARTIFACT_STORE: expected s3://bucket[/prefix], got ${url}`);
  return { bucket: match[1], prefix: (match[2] ?? "").replace(/^\/+|\/+$/g, "") };
}

export class S3ArtifactStore implements ArtifactStore {
  private readonly known = new Set<string>();

  constructor(
    private readonly client: S3Client,
    readonly bucket: string,
    readonly prefix: string,
    private readonly partBytes = PART_BYTES,
  ) {}

  /** The store `s3://bucket[/prefix]` names, with the client the AWS settings of `env` give. */
  static fromUrl(url: string, env: NodeJS.ProcessEnv = process.env): S3ArtifactStore {
    const { bucket, prefix } = parseStoreUrl(url);
    return new S3ArtifactStore(s3Client(env), bucket, prefix);
  }

  /** The object key of a name. */
  key(name: string): string {
    return this.prefix ? `${this.prefix}/${name}` : name;
  }

  where(name: string): string {
    return `s3://${this.bucket}/${this.key(name)}`;
  }

  async put(file: string, name: string, opts: { check?: boolean } = {}): Promise<void> {
    if (this.known.has(name)) return;
    if (opts.check && (await this.has(name))) return this.remember(name);
    for (let attempt = 0; ; attempt++) {
      const body = createReadStream(file);
      try {
        await new Upload({
          client: this.client,
          partSize: this.partBytes,
          queueSize: PARTS_AT_ONCE,
          params: {
            Bucket: this.bucket,
            Key: this.key(name),
            Body: body,
            IfNoneMatch: "*",
          },
        }).done();
        break;
      } catch (error) {
        if (status(error) === 412) break;
        if (status(error) === 409 && attempt < CONFLICT_RETRIES) {
          await sleep(100 * (attempt + 1));
          continue;
        }
        throw new Error(`could not store ${this.where(name)}: ${problem(error)}`, {
          cause: error,
        });
      } finally {
        body.destroy();
      }
    }
    this.remember(name);
  }

  /**
   * The object `name`, written to `target` (which must not exist); its sha256, or null when the
   * store has no such object. An outage of the store is waited out for a while (FETCH_RETRY).
   */
  async fetch(name: string, target: string): Promise<string | null> {
    try {
      return await retryWhile(storeOutage, () => this.fetchOnce(name, target), FETCH_RETRY);
    } catch (error) {
      throw new Error(`could not fetch ${this.where(name)}: ${problem(error)}`, { cause: error });
    }
  }

  private async fetchOnce(name: string, target: string): Promise<string | null> {
    let body: unknown;
    try {
      const response = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: this.key(name) }),
      );
      body = response.Body;
    } catch (error) {
      if (status(error) === 404) return null;
      throw error;
    }
    if (!(body instanceof Readable)) throw new Error("no body");
    const hash = createHash("sha256");
    const hashing = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    await mkdir(path.dirname(target), { recursive: true });
    try {
      await pipeline(body, hashing, createWriteStream(target, { flags: "wx" }));
    } catch (error) {
      // Cut off half-way: what came is dropped, and the next try starts afresh. (A target
      // that was there already is someone else's, and stays.)
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") await rm(target, { force: true });
      throw error;
    }
    this.remember(name);
    return hash.digest("hex");
  }

  private async has(name: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.key(name) }));
      return true;
    } catch (error) {
      if (status(error) === 404) return false;
      throw new Error(`could not reach ${this.where(name)}: ${problem(error)}`, { cause: error });
    }
  }

  private remember(name: string): void {
    if (this.known.size >= MAX_KNOWN) this.known.clear();
    this.known.add(name);
  }
}

/** A client for the AWS settings of `env`; without keys in it, the SDK's usual chain finds them. */
function s3Client(env: NodeJS.ProcessEnv): S3Client {
  const endpoint = env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL;
  const { AWS_ACCESS_KEY_ID: accessKeyId, AWS_SECRET_ACCESS_KEY: secretAccessKey } = env;
  return quietly(
    () =>
      new S3Client({
        region: env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1",
        ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
        ...(accessKeyId && secretAccessKey
          ? {
              credentials: {
                accessKeyId,
                secretAccessKey,
                ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
              },
            }
          : {}),
      }),
  );
}

/**
 * Makes a client without the SDK's notice, printed once per process on any Node before 22, that
 * its releases after January 2027 will need Node 22: tableminds supports Node 20, and a user
 * asking a question has nothing to do about it. The setting is the SDK's own, read once.
 */
function quietly(make: () => S3Client): S3Client {
  const before = process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";
  try {
    return make();
  } finally {
    if (before === undefined) delete process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED;
  }
}
