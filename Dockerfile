# syntax=docker/dockerfile:1
# secondcron operator image: compiled in a build stage with dev dependencies, shipped with production
# dependencies only, both stages on Node.js 24 LTS. `make image` builds this file as written with
# buildah (no Docker daemon), on a base passed as NODE_IMAGE that test/image/node-base.sh builds from
# Debian trixie and the official Node.js 24 build (the same node the Makefile and tests use);
# test/integration/image.test.ts checks the result against the runtime stage below, instruction by
# instruction, and runs it. With Docker and the official images: the default below.
ARG NODE_IMAGE=node:24-trixie-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
# Dependencies first: this layer is reused until the lockfile changes.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --ignore-scripts
COPY tsconfig.base.json tsconfig.json ./
COPY src ./src
RUN npx tsc -p tsconfig.json
# The git commit for --version, the first log line and secondcron_build_info (make image passes it;
# there is no .git in the build context).
ARG COMMIT=unknown
RUN printf '{"commit":"%s"}\n' "$COMMIT" > dist/build-info.json

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
# glibc's malloc serves blocks of 64 KiB and more with mmap, and gives them back on free. Left to
# itself it raises that bound to the largest block freed (up to 32 MiB), so zlib's states and Node's
# 64 KiB Buffer pools, made and freed at every gzip scrape, went to its heap and stayed there.
# Measured at 10,000 schedules (bench scale, three A/B pairs, 2026-12-07): idle RSS 167.5–171.5 →
# 146.0–152.4 MiB, peak 187.2–193.7 → 164.2–189.6 MiB; idle CPU and the gzip scrape's time moved
# both ways between pairs. The bench runs the operator with these ENV lines.
ENV MALLOC_MMAP_THRESHOLD_=65536
WORKDIR /app
# No dependency needs an install script; --ignore-scripts keeps it that way.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
# The distroless "nonroot" uid, numeric so that the kubelet can check the chart's runAsNonRoot; the
# chart sets no runAsUser (platforms that assign their own uid, OpenShift's restricted SCC, may).
USER 65532:65532
EXPOSE 8080 8081
# node itself is PID 1 (not npm, not a shell): SIGTERM reaches the operator, which releases its
# Lease and exits. --optimize-for-size (a V8 flag, refused in NODE_OPTIONS, so here): V8 grows the
# heap in smaller steps and gives pages back sooner. Measured at 10,000 schedules (bench scale,
# 2026-12-03): peak RSS 156 MiB with it against 173–183 without (the old space V8 grew during the
# 30,000 start-up writes), idle CPU no higher. The bench reads the flags from this line.
ENTRYPOINT ["node", "--optimize-for-size", "dist/main.js"]
