import { setSourceMapsEnabled } from "node:process";
