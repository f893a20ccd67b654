/**
 * STAND-IN, removed when issue-30a's contracts land on this branch (then these names are
 * imported from @screenfleet/contracts, which declares them with the same names and shapes:
 * libs/contracts/src/schemas/devices.schema.ts there).
 */
export type CaptureStatus = 'ok' | 'stalled' | 'idle';
export type AgentStatus = 'online' | 'unresponsive' | 'offline';

interface ContentTypeCapture {
  items_stored: number;
  last_item_time: string | null;
  items_last_hour: number;
  items_last_24h: number;
}

export interface DeviceSummary {
  device_name: string;
  capture_status: CaptureStatus;
  capture: {
    first_item_time: string | null;
    last_item_time: string | null;
    items_stored: number;
    items_last_hour: number;
    items_last_24h: number;
    by_content_type: { frames?: ContentTypeCapture; transcription?: ContentTypeCapture };
  };
  agent: { status: AgentStatus; last_heartbeat_time: string | null };
  archive: { items_archived: number; last_archived_item_time: string | null };
}

interface Bucket {
  start: string;
  items: number;
}

export type DeviceDetail = DeviceSummary & { timeline: { hourly: Bucket[]; daily: Bucket[] } };

export interface DevicesAnswer {
  data: DeviceSummary[];
  pagination: { limit: number; offset: number; total: number };
}
