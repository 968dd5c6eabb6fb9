import * as radashi from "radashi";
export default radashi;
