#!/usr/bin/env node
// The kubectl plugin's executable as the package installs it (package.json "bin", compiled to
// dist/cli/kubectl-metal.js): plain JavaScript with production dependencies only, e.g.
//   npm install --global metal-maintenance-0.1.0.tgz   # from `npm pack` of scripts/build-dist.sh's output
// A checkout runs the same main() through tsx with cli/kubectl-metal.mjs instead. See docs/cli.md.
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2));
