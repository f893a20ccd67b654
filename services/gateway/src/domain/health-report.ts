import { AppError, type HealthAnswer, type NewestItemTimes } from '@screenfleet/contracts';

type CaptureState = HealthAnswer['frame_status'];

/**
 * GET /health in screenpipe's shape. `down` names what is unreachable (the broker, the content
 * store, the ingest workers): then `degraded` (status_code 503) with them in `message`, and no
 * capture times. Otherwise frame_status / audio_status from the newest frame / transcription
 * among the devices the caller may see (`newest`), as screenpipe judges its own: ok within
 * `stallAfterMs` of now, stale past it, "no data" when none; `unhealthy` (500) when one is stale.
 */
export function healthReport(
  newest: NewestItemTimes | undefined,
  down: readonly string[],
  clock: { nowMs: number; stallAfterMs: number },
): HealthAnswer {
  if (down.length > 0 || !newest) {
    return {
      status: 'degraded',
      status_code: 503,
      last_frame_timestamp: null,
      last_audio_timestamp: null,
      frame_status: 'no data',
      audio_status: 'no data',
      message: `degraded: ${down.join(', ')} unavailable`,
      verbose_instructions:
        "the service cannot read captured data now; it retries by itself (see the services' logs and /readyz)",
    };
  }
  const state = (time: number | null): CaptureState =>
    time === null ? 'no data' : clock.nowMs - time <= clock.stallAfterMs ? 'ok' : 'stale';
  const { frames: lastFrame, transcription: lastAudio } = newest;
  const frame = state(lastFrame);
  const audio = state(lastAudio);
  const stale = [frame === 'stale' ? 'vision' : '', audio === 'stale' ? 'audio' : ''].filter(
    Boolean,
  );
  return {
    status: stale.length > 0 ? 'unhealthy' : 'healthy',
    status_code: stale.length > 0 ? 500 : 200,
    last_frame_timestamp: lastFrame === null ? null : new Date(lastFrame).toISOString(),
    last_audio_timestamp: lastAudio === null ? null : new Date(lastAudio).toISOString(),
    frame_status: frame,
    audio_status: audio,
    message:
      stale.length > 0
        ? `some systems are not functioning properly: ${stale.join(', ')}. frame status: ${frame}, audio status: ${audio}`
        : 'all systems are functioning normally.',
    verbose_instructions:
      stale.length > 0
        ? 'no device has sent new content lately: check the capturing desktops'
        : null,
  };
}

/** What a failed read of the counters says is down, in /health's words (else: not ours to say). */
export function unavailablePart(error: unknown): string | undefined {
  if (!(error instanceof AppError)) return undefined;
  return unavailableParts[error.code];
}

const unavailableParts: Partial<Record<AppError['code'], string>> = {
  broker_unavailable: 'broker',
  store_unavailable: 'content store',
  // The store did not read the summary within its budget: as good as down for /health.
  deadline_exceeded: 'content store',
  worker_unavailable: 'ingest workers',
};
