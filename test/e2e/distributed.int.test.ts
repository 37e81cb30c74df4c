import { describe } from 'vitest';
import { skipIntegration } from '../support/infra.js';
import { bootDistributed } from '../support/modes.js';
import { platformScenarios } from './platform.scenarios.js';

// Distributed mode: every service a separate process on real NATS and PostgreSQL.
describe.skipIf(skipIntegration())('distributed mode', () => {
  platformScenarios('distributed', () => bootDistributed());
});
