import { bootEmbedded } from '../support/modes.js';
import { platformScenarios } from './platform.scenarios.js';

// Embedded mode needs nothing but Node: it always runs (PGlite in memory, the in-process bus).
platformScenarios('embedded', () => bootEmbedded());
