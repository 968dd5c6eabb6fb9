import BigNumber from "bignumber.js";
export default BigNumber;
