import { useRef, useState } from "preact/hooks";
import type { MediaItem } from "@vellum/client";
import { describe } from "./api.js";

interface Props {
  value: string;
  onChange: (html: string) => void;
  onUpload: (file: File) => Promise<MediaItem>;
  labelledBy: string;
}

/** A toolbar command: the browser's editing command and its argument. */
interface Tool {
  label: string;
  title: string;
  command: string;
  argument?: string;
}

// The formats the server keeps (contract §5's allowlist); anything else it strips on save.
const TOOLS: Tool[] = [
  { label: "B", title: "Bold", command: "bold" },
  { label: "I", title: "Italic", command: "italic" },
  { label: "H2", title: "Heading", command: "formatBlock", argument: "h2" },
  { label: "H3", title: "Subheading", command: "formatBlock", argument: "h3" },
  { label: "¶", title: "Paragraph", command: "formatBlock", argument: "p" },
  { label: "• List", title: "Bulleted list", command: "insertUnorderedList" },
  { label: "1. List", title: "Numbered list", command: "insertOrderedList" },
  { label: "❝", title: "Quote", command: "formatBlock", argument: "blockquote" },
  { label: "</>", title: "Code block", command: "formatBlock", argument: "pre" },
];

const escapeAttribute = (value: string) =>
  value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * The content editor: a rich-text area with a toolbar for the formats the server keeps, links and
 * images (uploaded through the media API, then inserted at the caret), and the HTML itself for
 * what the toolbar does not do. Whatever it produces, the server sanitizes on save.
 */
export function RichText({ value, onChange, onUpload, labelledBy }: Props) {
  const area = useRef<HTMLDivElement>(null);
  const picker = useRef<HTMLInputElement>(null);
  const [source, setSource] = useState(false);
  const [uploading, setUploading] = useState(false);
  const [error, setError] = useState<string>();

  const changed = () => {
    if (area.current) onChange(area.current.innerHTML);
  };

  const apply = (command: string, argument?: string) => {
    area.current?.focus();
    document.execCommand("styleWithCSS", false, "false");
    document.execCommand(command, false, argument);
    changed();
  };

  const link = () => {
    const url = prompt("Link to (https://…, mailto:…)");
    if (url === null) return;
    if (url.trim() === "") apply("unlink");
    else apply("createLink", url.trim());
  };

  const insertImage = async (file: File) => {
    setUploading(true);
    setError(undefined);
    try {
      const item = await onUpload(file);
      const size = item.width && item.height ? ` width="${item.width}" height="${item.height}"` : "";
      // Cancel leaves the text empty: an image that only decorates.
      const alt = prompt("Describe the image for readers who cannot see it (its alternative text):", "") ?? "";
      apply("insertHTML", `<img src="${escapeAttribute(item.url)}" alt="${escapeAttribute(alt.trim())}"${size}>`);
    } catch (failure) {
      setError(describe(failure));
    } finally {
      setUploading(false);
    }
  };

  // Keeps the selection in the area while a toolbar button is pressed.
  const keepSelection = (event: MouseEvent) => event.preventDefault();

  return (
    <div class="rich-text">
      <div class="toolbar" role="toolbar" aria-label="Formatting">
        {TOOLS.map((tool) => (
          <button
            type="button"
            key={tool.title}
            title={tool.title}
            aria-label={tool.title}
            disabled={source}
            onMouseDown={keepSelection}
            onClick={() => apply(tool.command, tool.argument)}
          >
            {tool.label}
          </button>
        ))}
        <button
          type="button"
          title="Link"
          aria-label="Link"
          disabled={source}
          onMouseDown={keepSelection}
          onClick={link}
        >
          Link
        </button>
        <button
          type="button"
          title="Image"
          aria-label="Image"
          disabled={source || uploading}
          onMouseDown={keepSelection}
          onClick={() => picker.current?.click()}
        >
          {uploading ? "Uploading…" : "Image"}
        </button>
        <button type="button" class="toggle" aria-pressed={source} onClick={() => setSource(!source)}>
          HTML
        </button>
        <input
          ref={picker}
          type="file"
          accept="image/*"
          hidden
          onChange={(event) => {
            const file = event.currentTarget.files?.[0];
            event.currentTarget.value = "";
            if (file) void insertImage(file);
          }}
        />
      </div>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {source ? (
        <textarea
          class="source"
          aria-labelledby={labelledBy}
          spellcheck={false}
          value={value}
          onInput={(event) => onChange(event.currentTarget.value)}
        />
      ) : (
        <div
          ref={area}
          class="area"
          contentEditable
          role="textbox"
          aria-multiline="true"
          aria-labelledby={labelledBy}
          onInput={changed}
          // Preact writes this only when it differs from what the area holds: typing (which
          // reported the area's own HTML) leaves the caret alone; a load or a save's answer replaces it.
          dangerouslySetInnerHTML={{ __html: value }}
        />
      )}
    </div>
  );
}
