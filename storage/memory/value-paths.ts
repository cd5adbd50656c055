/**
 * The texts at a path of a stored value, read the way LangGraph's InMemoryStore reads the
 * `fields` of its index, so both stores embed the same texts:
 * - "$" (or no path): the whole value as indented JSON;
 * - "a.b": a nested field; "list[2]", "list[-1]", "list[*]": array items; "*": every value;
 * - "{a,b.c}": several fields at once (the path ends there).
 * Strings, numbers and booleans become their text, objects and arrays indented JSON.
 */
export function textsAtPath(value: unknown, path: string): string[] {
  if (!path || path === "$") return [JSON.stringify(value, null, 2)];
  const tokens = splitPath(path);
  if (tokens[0] === "$") return [JSON.stringify(value, null, 2)];
  return walk(value, tokens, 0);
}

/** "a.b[*].c" -> ["a", "b", "[*]", "c"]; brackets and braces may nest. */
export function splitPath(path: string): string[] {
  const tokens: string[] = [];
  let current = "";
  const flush = () => {
    if (current) tokens.push(current);
    current = "";
  };
  for (let i = 0; i < path.length; i++) {
    const char = path[i] as string;
    const close = char === "[" ? "]" : char === "{" ? "}" : null;
    if (close) {
      flush();
      let depth = 0;
      let group = "";
      for (; i < path.length; i++) {
        const c = path[i] as string;
        group += c;
        if (c === char) depth++;
        else if (c === close && --depth === 0) break;
      }
      tokens.push(group);
    } else if (char === ".") {
      flush();
    } else {
      current += char;
    }
  }
  flush();
  return tokens;
}

function leaf(value: unknown): string[] {
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean")
    return [String(value)];
  if (value !== null && typeof value === "object") return [JSON.stringify(value, null, 2)];
  return [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object";
}

function walk(value: unknown, tokens: string[], at: number): string[] {
  const token = tokens[at];
  if (token === undefined) return leaf(value);
  if (token.startsWith("[") && token.endsWith("]")) {
    if (!Array.isArray(value)) return [];
    const index = token.slice(1, -1);
    if (index === "*") return value.flatMap((item) => walk(item, tokens, at + 1));
    let i = Number.parseInt(index, 10);
    if (Number.isNaN(i)) return [];
    if (i < 0) i += value.length;
    return i >= 0 && i < value.length ? walk(value[i], tokens, at + 1) : [];
  }
  if (token.startsWith("{") && token.endsWith("}")) {
    if (!isRecord(value)) return [];
    return token
      .slice(1, -1)
      .split(",")
      .map((field) => field.trim())
      .flatMap((field) => {
        let current: unknown = value;
        for (const part of splitPath(field)) {
          if (!isRecord(current) || !(part in current)) return [];
          current = current[part];
        }
        // InMemoryStore embeds a null field as the text "null"; so do we.
        return current === null ? ["null"] : leaf(current);
      });
  }
  if (token === "*") {
    if (Array.isArray(value)) return value.flatMap((item) => walk(item, tokens, at + 1));
    return isRecord(value) ? Object.values(value).flatMap((v) => walk(v, tokens, at + 1)) : [];
  }
  return isRecord(value) && token in value ? walk(value[token], tokens, at + 1) : [];
}
