export { createRewardApp, type RewardAppOptions } from "./app.js";
export { bearerOf, readTokenFile, tokenMatches } from "./auth.js";
export {
  type PrefixMismatch,
  type RewardRequest,
  RewardRequestSchema,
  type RewardResponse,
  responseOf,
} from "./contract.js";
export { parseLabel, type RewardLabel, RewardLabelSchema } from "./label.js";
export { Limiter } from "./limit.js";
export { BadRequest, type ScoreOptions, scoreRequest } from "./score.js";
export {
  DEFAULT_BODY_LIMIT,
  type RewardServer,
  type RewardServerOptions,
  startRewardServer,
} from "./serve.js";
export { verlModuleSource, writeVerlModule } from "./verl.js";
