// The import-boundary rule, run through ESLint's own API on snippets placed (by file name) in each
// folder: a forbidden import fails lint, an allowed one does not.
import { describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { boundaries, forbidden } from './boundaries.js';

const eslint = new ESLint({
  cwd: process.cwd(),
  overrideConfigFile: true,
  overrideConfig: [
    {
      files: ['**/*.ts'],
      languageOptions: { parser: tseslint.parser },
      plugins: { boundaries },
      rules: { 'boundaries/imports': 'error' },
    },
  ],
});

async function lint(filePath: string, source: string): Promise<string[]> {
  const [result] = await eslint.lintText(`import { x } from '${source}';\nexport const y = x;\n`, {
    filePath,
  });
  return result!.messages.map((m) => `${m.ruleId}: ${m.message}`);
}

describe('import boundaries (npm run lint)', () => {
  it.each([
    ['controllers/approval/decide.ts', '../maintenance/queue.js', 'may not import controllers/maintenance/'],
    ['controllers/maintenance/decide/plan.ts', '../../boot/model.js', 'may not import controllers/boot/'],
    ['controllers/budget/decide.ts', '../../webhook/rules/eviction.js', 'may not import webhook/'],
    ['cli/migrate.ts', '../webhook/rules/legacy-labels.js', 'cli/ may not import webhook/'],
    ['webhook/app.ts', '../controllers/shared/kinds.js', "controllers/shared/ is the controllers' plumbing"],
    ['contract/approval.ts', '../lib/kube/client.js', 'contract/ is pure rules'],
    ['contract/names.ts', '../webhook/world.js', 'contract/ is pure rules'],
    ['lib/kube/budget-store.ts', '../../contract/budgets.js', 'lib/ is runtime plumbing'],
    ['controllers/shared/denial.ts', '../maintenance/waiters.js', 'controllers/shared/ may not import'],
  ])('%s importing %s fails', async (file, source, why) => {
    const messages = await lint(file, source);
    expect(messages).toHaveLength(1);
    expect(messages[0]).toContain('boundaries/imports');
    expect(messages[0]).toContain(why);
  });

  it.each([
    ['controllers/approval/decide.ts', '../../contract/approval.js'],
    ['controllers/approval/decide.ts', '../shared/writes.js'],
    ['controllers/approval/decide.ts', '../../api/maintenance/v1alpha1/servermaintenance.js'],
    ['controllers/maintenance/decide/plan.ts', '../queue.js'],
    ['webhook/rules/eviction.ts', '../../contract/budget-room.js'],
    ['contract/approval.ts', '../lib/policy/durations.js'],
    ['contract/codes.ts', '../lib/errors.js'],
    ['lib/kube/budget-store.ts', '../../api/maintenance/v1alpha1/serverdisruptionbudget.js'],
    ['controllers/budget/decide.test.ts', '../../webhook/testing/memory-world.js'],
  ])('%s importing %s passes', async (file, source) => {
    expect(await lint(file, source)).toEqual([]);
  });

  it('a test may use another binary’s fakes, not its code', () => {
    expect(forbidden('controllers/budget/decide.test.ts', 'webhook/testing/memory-world.js')).toBeUndefined();
    expect(forbidden('controllers/budget/decide.test.ts', 'webhook/world.js')).toContain(
      'may not import webhook/',
    );
  });
});
