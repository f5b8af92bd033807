import { defineHandler } from "nitro/h3";

export default defineHandler(() => "nitro home\n");
