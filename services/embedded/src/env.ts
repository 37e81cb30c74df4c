/**
 * The embedded platform's settings: every service runs in this one process, so it validates each service's own
 * settings (their `src/env.ts`) beside the shared ones it reads itself (the listener, the data folder, the event
 * store, headless initialisation). NATS_URL, DATABASE_URL and the ops port belong to distributed mode and are not read.
 * Source: docs/configuration.md.
 */
import { z } from 'zod';
import { evalsSettings } from '@agp/evals';
import { gatewaySettings } from '@agp/gateway';
import { interventionsSettings } from '@agp/interventions';
import { mcpSettings } from '@agp/mcp-gateway';
import { policiesSettings } from '@agp/policies';
import { statsSettings } from '@agp/stats';
import { dataDirEnv, eventStoreEnv, initKeysEnv, listenEnv, logEnv, subjectPrefixEnv } from '@agp/runtime';

/** The embedded process's settings schema. */
export const embeddedEnvSchema = z.object({
  ...logEnv,
  ...listenEnv,
  ...dataDirEnv,
  ...subjectPrefixEnv,
  ...eventStoreEnv,
  ...initKeysEnv,
  ...gatewaySettings,
  ...interventionsSettings,
  ...policiesSettings,
  ...statsSettings,
  ...evalsSettings,
  ...mcpSettings,
});
