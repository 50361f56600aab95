import { runMain } from '@platform/shared/main';
import { loadCommissionsConfig } from './config.ts';
import { startCommissionsService } from './service.ts';

runMain('commissions', () => startCommissionsService(loadCommissionsConfig()));
