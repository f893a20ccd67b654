import type { ListCommand, ListElementsResponse, ListedElement } from '@screenfleet/contracts';
import type { UiElement } from '../desktop/desktop';
import type { Snapshot } from './snapshots';

type Filters = Pick<
  ListCommand,
  'with_text_only' | 'interactable_only' | 'include_sometimes_interactable' | 'max_elements'
>;

function toListed(element: UiElement, index: number): ListedElement {
  return {
    index,
    role: element.role,
    text: element.name,
    interactability: element.interactability,
    position: { x: element.bounds.x, y: element.bounds.y },
    size: { width: element.bounds.width, height: element.bounds.height },
  };
}

/**
 * screenpipe's answer for a snapshot. Filters only hide elements: every element keeps its
 * index in the full snapshot, so an index read from a filtered answer presses that element.
 * interactable_only keeps 'definite' elements (and 'sometimes' ones unless
 * include_sometimes_interactable is false); with_text_only drops elements without a name;
 * max_elements cuts the filtered list. Stats describe the whole snapshot.
 */
export function toListing(snapshot: Snapshot, filters: Filters): ListElementsResponse {
  const includeSometimes = filters.include_sometimes_interactable !== false;
  const keep = (element: UiElement): boolean =>
    (!filters.with_text_only || element.name.trim() !== '') &&
    (!filters.interactable_only ||
      element.interactability === 'definite' ||
      (includeSometimes && element.interactability === 'sometimes'));
  const elements = snapshot.elements
    .map((element, index) => (keep(element) ? toListed(element, index) : undefined))
    .filter((element): element is ListedElement => element !== undefined)
    .slice(0, filters.max_elements ?? undefined);

  const byRole: Record<string, number> = {};
  const count = { definite: 0, sometimes: 0, none: 0 };
  for (const element of snapshot.elements) {
    byRole[element.role] = (byRole[element.role] ?? 0) + 1;
    count[element.interactability] += 1;
  }
  return {
    elements,
    stats: {
      total: snapshot.elements.length,
      definitely_interactable: count.definite,
      sometimes_interactable: count.sometimes,
      non_interactable: count.none,
      by_role: byRole,
    },
    cache_info: {
      cache_id: snapshot.cacheId,
      timestamp: new Date(snapshot.takenAt).toISOString(),
      expires_at: new Date(snapshot.expiresAt).toISOString(),
      element_count: snapshot.elements.length,
      ttl_seconds: (snapshot.expiresAt - snapshot.takenAt) / 1000,
    },
  };
}
