import { runMain } from '@platform/shared/main';
import { loadAffiliatesConfig } from './config.ts';
import { startAffiliatesService } from './service.ts';

runMain('affiliates', () => startAffiliatesService(loadAffiliatesConfig()));
