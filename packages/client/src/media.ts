import type { RequestOptions } from "./options.js";
import type { Transport } from "./transport.js";
import type { MediaItem } from "./types.js";

export interface UploadOptions extends RequestOptions {
  /** The part's file name when `file` is a `Blob` (a `File` has its own). The service ignores it for the type. */
  filename?: string;
}

/** `POST /api/v1/media`. */
export class MediaApi {
  readonly #transport: Transport;

  constructor(transport: Transport) {
    this.#transport = transport;
  }

  /**
   * Uploads one file: a `Blob`/`File`, sent as the `file` part, or a `FormData` that already holds a `file` part.
   * The service types it by its bytes. The same bytes again resolve to the item stored the first time.
   */
  async upload(file: Blob | FormData, options: UploadOptions = {}): Promise<MediaItem> {
    const form = file instanceof FormData ? file : asForm(file, options.filename);
    return this.#transport.json<MediaItem>({
      method: "POST",
      path: "/api/v1/media",
      form,
      write: true,
      signal: options.signal,
    });
  }
}

function asForm(file: Blob, filename: string | undefined): FormData {
  const form = new FormData();
  if (filename === undefined) form.append("file", file);
  else form.append("file", file, filename);
  return form;
}
