import { z } from "zod";

/*
 * The one table of model roles. A role is an agent that may have a model of its own: the
 * configuration's `<role>Model` field and the `TABLEMINDS_<ROLE>_MODEL` variable are derived
 * from this table, and so are the role's own temperature field (where it has one), the help
 * texts and the docs. Which grammar an embedded model answers a role in is chosen by the
 * speaker a node names (models/local-grammar.ts), never read from the prompt.
 */
export const ROLE_TABLE = {
  planner: {
    does: "the planner (and the orchestrator's decomposer)",
    model: "Model for the planner only",
    temperature: "Sampling temperature of the planner (else temperature; mom's plans: 1.0)",
  },
  coder: {
    does: "the coder (and the sql and calc workers)",
    model: "Model for the coder only",
    temperature: "Sampling temperature of the coder (else temperature; 1.0 when mom samples codes)",
  },
  answerer: {
    does: "the answerer (and the orchestrator's composer)",
    model: "Model for the answerer only",
    temperature:
      "Sampling temperature of the answerer (else temperature; 1.0 when mom samples answers)",
  },
  checker: {
    does: "the LLM checker and mom's judge",
    model: "Model for the LLM checker only",
  },
  reflector: { does: "the reflector", model: "Model for the reflector only" },
  archiver: {
    does: "the archiver, which summarizes episodes for memory (`llmArchiver`)",
    model: "Model that summarizes episodes for memory",
  },
} as const satisfies Record<string, { does: string; model: string; temperature?: string }>;

export type Role = keyof typeof ROLE_TABLE;
export const ROLES = Object.keys(ROLE_TABLE) as Role[];

type TemperedRole = {
  [R in Role]: (typeof ROLE_TABLE)[R] extends { temperature: string } ? R : never;
}[Role];

export type RoleModelField = `${Role}Model`;
export type RoleTemperatureField = `${TemperedRole}Temperature`;

export const roleModelField = <R extends Role>(role: R): `${R}Model` => `${role}Model`;
export const roleEnvVar = (role: Role): `TABLEMINDS_${Uppercase<Role>}_MODEL` =>
  `TABLEMINDS_${role.toUpperCase() as Uppercase<Role>}_MODEL`;
export const roleTemperatureField = (role: Role): RoleTemperatureField | undefined =>
  "temperature" in ROLE_TABLE[role] ? (`${role}Temperature` as RoleTemperatureField) : undefined;

const temperature = () => z.number().min(0).max(2).optional();

/** The configuration's `<role>Model` fields, in the table's order. */
export function roleModelFields(): Record<RoleModelField, z.ZodOptional<z.ZodString>> {
  return Object.fromEntries(
    ROLES.map((role) => [
      roleModelField(role),
      z.string().optional().describe(ROLE_TABLE[role].model),
    ]),
  ) as Record<RoleModelField, z.ZodOptional<z.ZodString>>;
}

/** The configuration's `<role>Temperature` fields, for the roles that have one. */
export function roleTemperatureFields(): Record<
  RoleTemperatureField,
  ReturnType<typeof temperature>
> {
  const fields: [string, ReturnType<typeof temperature>][] = [];
  for (const role of ROLES) {
    const own = ROLE_TABLE[role] as { temperature?: string };
    const field = roleTemperatureField(role);
    if (field && own.temperature) fields.push([field, temperature().describe(own.temperature)]);
  }
  return Object.fromEntries(fields) as Record<RoleTemperatureField, ReturnType<typeof temperature>>;
}
