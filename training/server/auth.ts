import { createHash, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";

/** The token in `file`, trimmed; throws when the file is missing or holds no token. */
export async function readTokenFile(file: string): Promise<string> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? "unreadable";
    throw new Error(`token file ${file} cannot be read (${code})`);
  }
  const token = text.trim();
  if (!token) throw new Error(`token file ${file} is empty`);
  if (/\s/.test(token)) throw new Error(`token file ${file} holds whitespace inside the token`);
  return token;
}

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();

/** Compares in constant time; hashing first makes the lengths equal and hides them. */
export function tokenMatches(given: string | undefined, expected: string): boolean {
  if (given === undefined) return false;
  return timingSafeEqual(digest(given), digest(expected));
}

/** Why a request's token is refused ("missing bearer token", "wrong bearer token"), or null. */
export function tokenRefusal(given: string | undefined, expected: string): string | null {
  if (tokenMatches(given, expected)) return null;
  return given === undefined ? "missing bearer token" : "wrong bearer token";
}

/** The token of an `Authorization: Bearer <token>` header, if any. */
export function bearerOf(header: string | undefined): string | undefined {
  const match = header?.match(/^Bearer\s+(\S+)\s*$/i);
  return match?.[1];
}
