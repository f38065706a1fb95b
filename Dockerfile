# One image for every binary; each Deployment picks its entry point, e.g.
#   command: ["node", "dist/controllers/maintenance/main.js"]
FROM node:20-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY api api
COPY contract contract
COPY lib lib
COPY policies policies
COPY webhook webhook
COPY controllers controllers
COPY cli cli
RUN npx tsc -p tsconfig.build.json && npm prune --omit=dev

FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /src/node_modules node_modules
COPY --from=build /src/dist dist
COPY --from=build /src/package.json package.json
COPY policies/default-policy.yaml policies/default-policy.yaml
USER 65532:65532
ENTRYPOINT ["node"]
