import { XMLParser, XMLBuilder, XMLValidator } from "fast-xml-parser";
export default { XMLParser, XMLBuilder, XMLValidator };
