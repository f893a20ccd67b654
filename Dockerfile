# One image for every server-side service; docker-compose.yml picks the service by command.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY libs libs
COPY services services
RUN npm ci --no-audit --no-fund && npx tsc -b && npm prune --omit=dev

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build --chown=node:node /app /app
USER node
CMD ["node", "services/gateway/dist/main.js"]
