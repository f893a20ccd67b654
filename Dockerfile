# Server-side services, one build target each: `docker build --target gateway .` (likewise
# ingest-worker, archive-worker); docker-compose.yml names them. Operator agents run on the
# desktops (they need the display), not from this file. Node 24: tested in .ci/run.
#
# build:   every dependency, compile all workspaces, gather package.json files and dist/ (and
#          the console's stylesheet, the one file it serves that tsc does not emit).
# runtime: `npm ci --omit=dev` against the lockfile, only compiled code, root-owned files
#          (the service cannot rewrite itself), runs as the image's non-root `node` user.
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.base.json ./
COPY libs libs
COPY services services
RUN npm ci --no-audit --no-fund \
 && npx tsc -b \
 && mkdir -p /out \
 && cp package.json package-lock.json /out/ \
 && for d in libs/* services/*; do \
      mkdir -p "/out/$d" && cp "$d/package.json" "/out/$d/" && cp -r "$d/dist" "/out/$d/"; \
    done \
 && mkdir -p /out/services/gateway/console \
 && cp -r services/gateway/console/static /out/services/gateway/console/

FROM node:24-bookworm-slim AS runtime
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /out /app
# Optional native add-ons (usocket, for dbus-next) need a compiler this image does not have;
# npm skips them, and no server-side service uses them.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force
USER node

FROM runtime AS gateway
EXPOSE 3030 9464
CMD ["node", "services/gateway/dist/main.js"]

FROM runtime AS ingest-worker
EXPOSE 9465
CMD ["node", "services/ingest-worker/dist/main.js"]

FROM runtime AS archive-worker
EXPOSE 9466
CMD ["node", "services/archive-worker/dist/main.js"]
