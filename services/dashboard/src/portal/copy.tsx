import { useState } from 'preact/hooks';

/** A link to hand out, shown whole, with a "Copy" button that says (to screen readers too) when it has copied. */
export function Copyable(props: { label: string; value: string; testId?: string }) {
  const [said, setSaid] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.value);
      setSaid('Copied');
    } catch {
      // No clipboard (an insecure origin, a refused permission): the link is there to select by hand.
      setSaid('Copying failed: select the link and copy it');
    }
  };
  return (
    <div class="copyable">
      <code data-testid={props.testId}>{props.value}</code>
      <button type="button" aria-label={`Copy ${props.label}`} onClick={() => void copy()}>
        Copy
      </button>
      <span role="status" class="muted">
        {said}
      </span>
    </div>
  );
}
