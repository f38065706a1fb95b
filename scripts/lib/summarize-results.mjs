// Sums Jest's JSON reports and the checks of scripts/test.sh into one verdict.
// Prints failed test names, then the closing line "N passed, N failed"; exits 1 on any failure
// or when a Jest run left no report (it crashed before writing one).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
let passed = 0;
let failed = 0;
const failures = [];
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
const expectedReports = [
  'jest-unit.json',
  'jest-integration.json',
  'jest-integration-waits.json',
  'jest-cluster-mode.json',
];
for (const expected of expectedReports) {
  if (!files.includes(expected)) {
    failed++;
    failures.push(`${expected}: Jest wrote no report (it crashed or was killed)`);
  }
}
for (const file of files) {
  const data = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  if (file.startsWith('jest-')) {
    passed += data.numPassedTests;
    failed += data.numFailedTests;
    for (const suite of data.testResults) {
      for (const t of suite.assertionResults) {
        if (t.status === 'failed')
          failures.push(`${suite.name.replace(process.cwd() + '/', '')}: ${t.fullName}`);
      }
      // A suite that failed to run (syntax error, setup failure) has no failed assertions.
      if (suite.status === 'failed' && suite.assertionResults.every((t) => t.status !== 'failed')) {
        failed++;
        failures.push(
          `${suite.name.replace(process.cwd() + '/', '')}: ${
            String(suite.message)
              .split('\n')
              .find((l) => l.trim()) ?? 'suite failed'
          }`,
        );
      }
    }
    if (data.numRuntimeErrorTestSuites > 0 && !data.testResults.length) failed++;
  } else {
    if (data.passed) passed++;
    else {
      failed++;
      failures.push(`check ${data.name}`);
    }
  }
}
for (const f of failures) console.log(`FAILED ${f}`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed > 0 ? 1 : 0);
