#!/usr/bin/env node
// The kubectl plugin's executable (package.json "bin"): put it on PATH as `kubectl-metal` and
// `kubectl metal ...` runs cli/main.ts through tsx's loader. See docs/cli.md.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./main.ts');
process.exitCode = await main(process.argv.slice(2));
