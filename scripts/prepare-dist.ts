// Builds the image's files the integration suites start binaries from, unless a build from the
// checkout's current inputs is there already (e2e/harness/dist.ts); prints their directory.
// scripts/test.sh runs it as a step of its own, so no suite's setup pays for the build.
import { prepareDist } from '../e2e/harness/dist.js';

console.log(await prepareDist());
