/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Implicit-rejection test vectors for PKCS#1 v1.5 decryption, published with
 * draft-irtf-cfrg-rsa-guidance and in OpenSSL's test data
 * (test/recipes/30-test_evp_data/evppkey_rsa_common.txt, key "RSA-2048-2").
 * Test data only; full-length (256-byte) ciphertexts. A plaintext is given as
 * text or, for synthetic (rejected) results, as hex.
 */
#ifndef GPURSA_IR_VECTORS_H
#define GPURSA_IR_VECTORS_H

static const char ir_vector_key_pem[] =
    "-----BEGIN RSA PRIVATE KEY-----\n"
    "MIIEowIBAAKCAQEAyMyDlxQJjaVsqiNkD5PciZfBY3KWj8Gwxt9RE8HJTosh5IrS\n"
    "KX5lQZARtObY9ec7G3iyV0ADIdHva2AtTsjOjRQclJBetK0wZjmkkgZTS25/JgdC\n"
    "Ppff/RM8iNchOZ3vvH6WzNy9fzquH+iScSv7SSmBfVEWZkQKH6y3ogj16hZZEK3Y\n"
    "o/LUlyAjYMy2MgJPDQcWnBkY8xb3lLFDrvVOyHUipMApePlomYC/+/ZJwwfoGBm/\n"
    "+IQJY41IvZS+FStZ/2SfoL1inQ/6GBPDq/S1a9PC6lRl3/oUWJKSqdiiStJr5+4F\n"
    "EHQbY4LUPIPVv6QKRmE9BivkRVF9vK8MtOGnaQIDAQABAoIBABRVAQ4PLVh2Y6Zm\n"
    "pv8czbvw7dgQBkbQKgI5IpCJksStOeVWWSlybvZQjDpxFY7wtv91HTnQdYC7LS8G\n"
    "MhBELQYD/1DbvXs1/iybsZpHoa+FpMJJAeAsqLWLeRmyDt8yqs+/Ua20vEthubfp\n"
    "aMqk1XD3DvGNgGMiiJPkfUOe/KeTJZvPLNEIo9hojN8HjnrHmZafIznSwfUiuWlo\n"
    "RimpM7quwmgWJeq4T05W9ER+nYj7mhmc9xAj4OJXsURBszyE07xnyoAx0mEmGBA6\n"
    "egpAhEJi912IkM1hblH5A1SI/W4Jnej/bWWk/xGCVIB8n1jS+7qLoVHcjGi+NJyX\n"
    "eiBOBMECgYEA+PWta6gokxvqRZuKP23AQdI0gkCcJXHpY/MfdIYColY3GziD7UWe\n"
    "z5cFJkWe3RbgVSL1pF2UdRsuwtrycsf4gWpSwA0YCAFxY02omdeXMiL1G5N2MFSG\n"
    "lqn32MJKWUl8HvzUVc+5fuhtK200lyszL9owPwSZm062tcwLsz53Yd0CgYEAznou\n"
    "O0mpC5YzChLcaCvfvfuujdbcA7YUeu+9V1dD8PbaTYYjUGG3Gv2crS00Al5WrIaw\n"
    "93Q+s14ay8ojeJVCRGW3Bu0iF15XGMjHC2cD6o9rUQ+UW+SOWja7PDyRcytYnfwF\n"
    "1y2AkDGURSvaITSGR+xylD8RqEbmL66+jrU2sP0CgYB2/hXxiuI5zfHfa0RcpLxr\n"
    "uWjXiMIZM6T13NKAAz1nEgYswIpt8gTB+9C+RjB0Q+bdSmRWN1Qp1OA4yiVvrxyb\n"
    "3pHGsXt2+BmV+RxIy768e/DjSUwINZ5OjNalh9e5bWIh/X4PtcVXXwgu5XdpeYBx\n"
    "sru0oyI4FRtHMUu2VHkDEQKBgQCZiEiwVUmaEAnLx9KUs2sf/fICDm5zZAU+lN4a\n"
    "AA3JNAWH9+JydvaM32CNdTtjN3sDtvQITSwCfEs4lgpiM7qe2XOLdvEOp1vkVgeL\n"
    "9wH2fMaz8/3BhuZDNsdrNy6AkQ7ICwrcwj0C+5rhBIaigkgHW06n5W3fzziC5FFW\n"
    "FHGikQKBgGQ790ZCn32DZnoGUwITR++/wF5jUfghqd67YODszeUAWtnp7DHlWPfp\n"
    "LCkyjnRWnXzvfHTKvCs1XtQBoaCRS048uwZITlgZYFEWntFMqi76bqBE4FTSYUTM\n"
    "FinFUBBVigThM/RLfCRNrCW/kTxXuJDuSfVIJZzWNAT+9oWdz5da\n"
    "-----END RSA PRIVATE KEY-----\n";

struct ir_vector {
    const char *name;
    const char *ciphertext;     /* hex */
    const char *plaintext;      /* text, or hex when hex_plaintext */
    int hex_plaintext;
};

static const struct ir_vector ir_vectors[] = {
    { "positive",
      "8bfe264e85d3bdeaa6b8851b8e3b956ee3d226fd3f69063a86880173a273d9f2"
      "83b2eebdd1ed35f7e02d91c571981b6737d5320bd8396b0f3ad5b019daec1b0a"
      "ab3cbbc026395f4fd14f13673f2dfc81f9b660ec26ac381e6db3299b4e460b43"
      "fab9955df2b3cfaa20e900e19c856238fd371899c2bf2ce8c868b76754e5db3b"
      "036533fd603746be13c10d4e3e6022ebc905d20c2a7f32b215a4cd53b3f44ca1"
      "c327d2c2b651145821c08396c89071f665349c25e44d2733cd9305985ceef643"
      "0c3cf57af5fa224089221218fa34737c79c446d28a94c41c96e4e92ac53fbcf3"
      "84dea8419ea089f8784445a492c812eb0d409467f75afd7d4d1078886205a066",
      "lorem ipsum dolor sit amet", 0 },
    { "negative_empty",
      "20aaa8adbbc593a924ba1c5c7990b5c2242ae4b99d0fe636a19a4cf754edbcee"
      "774e472fe028160ed42634f8864900cb514006da642cae6ae8c7d087caebcfa6"
      "dad1551301e130344989a1d462d4164505f6393933450c67bc6d39d8f5160907"
      "cabc251b737925a1cf21e5c6aa5781b7769f6a2a583d97cce008c0f8b6add5f0"
      "b2bd80bee60237aa39bb20719fe75749f4bc4e42466ef5a861ae3a92395c7d85"
      "8d430bfe38040f445ea93fa2958b503539800ffa5ce5f8cf51fa8171a91f36cb"
      "4f4575e8de6b4d3f096ee140b938fd2f50ee13f0d050222e2a72b0a3069ff3a6"
      "738e82c87090caa5aed4fcbe882c49646aa250b98f12f83c8d528113614a29e7",
      "", 1 },
    { "negative_max_length",
      "48cceab10f39a4db32f60074feea473cbcdb7accf92e150417f76b44756b190e"
      "843e79ec12aa85083a21f5437e7bad0a60482e601198f9d86923239c8786ee72"
      "8285afd0937f7dde12717f28389843d7375912b07b991f4fdb0190fced8ba665"
      "314367e8c5f9d2981d0f5128feeb46cb50fc237e64438a86df198dd0209364ae"
      "3a842d77532b66b7ef263b83b1541ed671b120dfd660462e2107a4ee7b964e73"
      "4a7bd68d90dda61770658a3c242948532da32648687e0318286473f675b412d6"
      "468f013f14d760a358dfcad3cda2afeec5e268a37d250c37f722f468a70dfd92"
      "d7294c3c1ee1e7f8843b7d16f9f37ef35748c3ae93aa155cdcdfeb4e78567303",
      "22d850137b9eebe092b24f602dc5bb7918c16bd89ddbf20467b119d205f9c2e4"
      "bd7d2592cf1e532106e0f33557565923c73a02d4f09c0c22bea89148183e6031"
      "7f7028b3aa1f261f91c979393101d7e15f4067e63979b32751658ef769610fe9"
      "7cf9cef3278b3117d384051c3b1d82c251c2305418c8f6840530e631aad63e70"
      "e20e025bcd8efb54c92ec6d3b106a2f8e64eeff7d38495b0fc50c97138af4b1c"
      "0a67a1c4e27b077b8439332edfa8608dfeae653cd6a628ac550395f7e74390e4"
      "2c11682234870925eeaa1fa71b76cf1f2ee3bda69f6717033ff8b7c95c9799e7"
      "a3bea5e7e4a1c359772fb6b1c6e6c516661dfe30c3", 1 },
    { "negative_prf_second_to_last",
      "1439e08c3f84c1a7fec74ce07614b20e01f6fa4e8c2a6cffdc3520d8889e5d9a"
      "950c6425798f85d4be38d300ea5695f13ecd4cb389d1ff5b82484b494d6280ab"
      "7fa78e645933981cb934cce8bfcd114cc0e6811eefa47aae20af638a1cd163d2"
      "d3366186d0a07df0c81f6c9f3171cf3561472e98a6006bf75ddb457bed036dcc"
      "e199369de7d94ef2c68e8467ee0604eea2b3009479162a7891ba5c40cab17f49"
      "e1c438cb6eaea4f76ce23cce0e483ff0e96fa790ea15be67671814342d0a23f4"
      "a20262b6182e72f3a67cd289711503c85516a9ed225422f98b116f1ab080a80a"
      "bd6f0216df88d8cfd67c139243be8dd78502a7aaf6bc99d7da71bcdf627e7354",
      "0f9b", 1 },
    { "negative_prf_third_to_last",
      "1690ebcceece2ce024f382e467cf8510e74514120937978576caf684d4a02ad5"
      "69e8d76cbe365a060e00779de2f0865ccf0d923de3b4783a4e2c74f422e2f326"
      "086c390b658ba47f31ab013aa80f468c71256e5fa5679b24e83cd82c3d1e05e3"
      "98208155de2212993cd2b8bab6987cf4cc1293f19909219439d74127545e9ed8"
      "a706961b8ee2119f6bfacafbef91b75a789ba65b8b833bc6149cf49b5c4d2c63"
      "59f62808659ba6541e1cd24bf7f7410486b5103f6c0ea29334ea6f4975b17387"
      "474fe920710ea61568d7b7c0a7916acf21665ad5a31c4eabcde44f8fb6120d84"
      "57afa1f3c85d517cda364af620113ae5a3c52a048821731922737307f77a1081",
      "4f02", 1 },
    { "positive_11_bytes",
      "6213634593332c485cef783ea2846e3d6e8b0e005cd8293eaebbaa5079712fd6"
      "81579bdfbbda138ae4d9d952917a03c92398ec0cb2bb0c6b5a8d55061fed0d0d"
      "8d72473563152648cfe640b335dc95331c21cb133a91790fa93ae44497c12870"
      "8970d2beeb77e8721b061b1c44034143734a77be8220877415a6dba073c38716"
      "05380542a9f25252a4babe8331cdd53cf828423f3cc70b560624d0581fb126b2"
      "ed4f4ed358f0eb8065cf176399ac1a846a31055f9ae8c9c24a1ba050bc208421"
      "25bc1753158f8065f3adb9cc16bfdf83816bdf38b624f12022c5a6fbfe29bc91"
      "542be8c0208a770bcd677dc597f5557dc2ce28a11bf3e3857f158717a33f6592",
      "lorem ipsum", 0 },
    { "positive_zero_padded_ciphertext",
      "00a2e8f114ea8d05d12dc843e3cc3b2edc8229ff2a028bda29ba9d55e3cd0291"
      "1902fef1f42a075bf05e8016e8567213d6f260fa49e360779dd81aeea3e04c2c"
      "b567e0d72b98bf754014561b7511e083d20e0bfb9cd23f8a0d3c88900c49d2fc"
      "d5843ff0765607b2026f28202a87aa94678aed22a0c20724541394cd8f44e373"
      "eba1d2bae98f516c1e2ba3d86852d064f856b1daf24795e767a2b90396e50743"
      "e3150664afab131fe40ea405dcf572dd1079af1d3f0392ccadcca0a12740dbb2"
      "13b925ca2a06b1bc1383e83a658c82ba2e7427342379084d5f66b544579f0766"
      "4cb26edd4f10fd913fdbc0de05ef887d4d1ec1ac95652397ea7fd4e4759fda8b",
      "lorem ipsum", 0 },
    { "positive_double_zero_padded_ciphertext",
      "00001f71879b426127f7dead621f7380a7098cf7d22173aa27991b143c46d533"
      "83c209bd0c9c00d84078037e715f6b98c65005a77120070522ede51d472c87ef"
      "94b94ead4c5428ee108a345561658301911ec5a8f7dd43ed4a3957fd29fb02a3"
      "529bf63f8040d3953490939bd8f78b2a3404b6fb5ff70a4bfdaac5c541d6bcce"
      "49c9778cc390be24cbef1d1eca7e870457241d3ff72ca44f9f56bdf31a890fa5"
      "eb3a9107b603ccc9d06a5dd911a664c82b6abd4fe036f8db8d5a070c2d86386a"
      "e18d97adc1847640c211d91ff5c3387574a26f8ef27ca7f48d2dd1f0c7f14b81"
      "cc9d33ee6853031d3ecf10a914ffd90947909c8011fd30249219348ebff76bfc",
      "lorem ipsum", 0 },
    { "positive_with_0_byte_synthetic",
      "b5e49308f6e9590014ffaffc5b8560755739dd501f1d4e9227a7d291408cf4b7"
      "53f292322ff8bead613bf2caa181b221bc38caf6392deafb28eb21ad60930841"
      "ed02fd6225cc9c463409adbe7d8f32440212fbe3881c51375bb09565efb22e62"
      "b071472fb38676e5b4e23a0617db5d14d93519ac0007a30a9c822eb31c38b57f"
      "cb1be29608fcf1ca2abdcaf5d5752bbc2b5ac7dba5afcff4a5641da360dd01f7"
      "112539b1ed46cdb550a3b1006559b9fe1891030ec80f0727c42401ddd6cbb5e3"
      "c80f312df6ec89394c5a7118f573105e7ab00fe57833c126141b50a935224842"
      "addfb479f75160659ba28877b512bb9a93084ad8bec540f92640f63a11a010e0",
      "lorem ipsum", 0 },
    { "positive_with_245_byte_synthetic",
      "1ea0b50ca65203d0a09280d39704b24fe6e47800189db5033f202761a78bafb2"
      "70c5e25abd1f7ecc6e7abc4f26d1b0cd9b8c648d529416ee64ccbdd7aa72a771"
      "d0353262b543f0e436076f40a1095f5c7dfd10dcf0059ccb30e92dfa5e015661"
      "8215f1c3ff3aa997a9d999e506924f5289e3ac72e5e2086cc7b499d71583ed56"
      "1028671155db4005bee01800a7cdbdae781dd32199b8914b5d4011dd6ff11cd2"
      "6d46aad54934d293b0bc403dd211bf13b5a5c6836a5e769930f437ffd8634fb7"
      "371776f4bc88fa6c271d8aa6013df89ae6470154497c4ac861be2a1c65ebffec"
      "139bf7aaba3a81c7c5cdd84da9af5d3edfb957848074686b5837ecbcb6a41c50",
      "lorem ipsum", 0 },
    { "negative_11_bytes",
      "5f02f4b1f46935c742ebe62b6f05aa0a3286aab91a49b34780adde6410ab46f7"
      "386e05748331864ac98e1da63686e4babe3a19ed40a7f5ceefb89179596aab07"
      "ab1015e03b8f825084dab028b6731288f2e511a4b314b6ea3997d2e8fe2825ce"
      "f8897cbbdfb6c939d441d6e04948414bb69e682927ef8576c9a7090d4aad0e74"
      "c520d6d5ce63a154720f00b76de8cc550b1aa14f016d63a7b6d6eaa1f7dbe9e5"
      "0200d3159b3d099c900116bf4eba3b94204f18b1317b07529751abf64a26b0a0"
      "bf1c8ce757333b3d673211b67cc0653f2fe2620d57c8b6ee574a0323a167eab1"
      "106d9bc7fd90d415be5f1e9891a0e6c709f4fc0404e8226f8477b4e939b36eb2",
      "af9ac70191c92413cb9f2d", 1 },
    { "negative_wrong_first_byte",
      "9b2ec9c0c917c98f1ad3d0119aec6be51ae3106e9af1914d48600ab6a2c0c0c8"
      "ae02a2dc3039906ff3aac904af32ec798fd65f3ad1afa2e69400e7c1de81f572"
      "8f3b3291f38263bc7a90a0563e43ce7a0d4ee9c0d8a716621ca5d3d081188769"
      "ce1b131af7d35b13dea99153579c86db31fe07d5a2c14d621b77854e48a8df41"
      "b5798563af489a291e417b6a334c63222627376118c02c53b6e86310f728734f"
      "fc86ef9d7c8bf56c0c841b24b82b59f51aee4526ba1c4268506d301e4ebc498c"
      "6aebb6fd5258c876bf900bac8ca4d309dd522f6a6343599a8bc3760f422c10c7"
      "2d0ad527ce4af1874124ace3d99bb74db8d69d2528db22c3a37644640f95c05f",
      "a1f8c9255c35cfba403ccc", 1 },
    { "negative_wrong_second_byte",
      "782c2b59a21a511243820acedd567c136f6d3090c115232a82a5efb0b178285f"
      "55b5ec2d2bac96bf00d6592ea7cdc3341610c8fb07e527e5e2d20cfaf2c7f23e"
      "375431f45e998929a02f25fd95354c33838090bca838502259e92d86d568bc2c"
      "db132fab2a399593ca60a015dc2bb1afcd64fef8a3834e17e5358d822980dc44"
      "6e845b3ab4702b1ee41fe5db716d92348d5091c15d35a110555a35deb4650a5a"
      "1d2c98025d42d4544f8b32aa6a5e02dc02deaed9a7313b73b49b0d4772a3768b"
      "0ea0db5846ace6569cae677bf67fb0acf3c255dc01ec8400c963b6e49b106772"
      "8b4e563d7e1e1515664347b92ee64db7efb5452357a02fff7fcb7437abc2e579",
      "e6d700309ca0ed62452254", 1 },
    { "negative_zero_first_ciphertext_byte",
      "0096136621faf36d5290b16bd26295de27f895d1faa51c800dafce73d001d607"
      "96cd4e2ac3fa2162131d859cd9da5a0c8a42281d9a63e5f353971b72e36b5722"
      "e4ac444d77f892a5443deb3dca49fa732fe855727196e23c26eeac55eeced826"
      "7a209ebc0f92f4656d64a6c13f7f7ce544ebeb0f668fe3a6c0f189e4bcd5ea12"
      "b73cf63e0c8350ee130dd62f01e5c97a1e13f52fde96a9a1bc9936ce734fdd61"
      "f27b18216f1d6de87f49cf4f2ea821fb8efd1f92cdad529baf7e31aff9bff407"
      "4f2cad2b4243dd15a711adcf7de900851fbd6bcb53dac399d7c880531d06f25f"
      "7002e1aaf1722765865d2c2b902c7736acd27bc6cbd3e38b560e2eecf7d4b576",
      "ba27b1842e7c21c0e7ef6a", 1 },
    { "negative_two_zero_ciphertext_bytes",
      "0000587cccc6b264bdfe0dc2149a988047fa921801f3502ea64624c510c6033d"
      "2f427e3f136c26e88ea9f6519e86a542cec96aad1e5e9013c3cc203b6de15a69"
      "183050813af5c9ad79703136d4b92f50ce171eefc6aa7988ecf02f319ffc5eaf"
      "d6ee7a137f8fce64b255bb1b8dd19cfe767d64fdb468b9b2e9e7a0c24dae0323"
      "9c8c714d3f40b7ee9c4e59ac15b17e4d328f1100756bce17133e8e7493b54e50"
      "06c3cbcdacd134130c5132a1edebdbd01a0c41452d16ed7a0788003c34730d08"
      "08e7e14c797a21f2b45a8aa1644357fd5e988f99b017d9df37563a354c788dc0"
      "e2f9466045622fa3f3e17db63414d27761f57392623a2bef6467501c63e8d645",
      "d5cf555b1d6151029a429a", 1 },
};

#define IR_NVECTORS (sizeof(ir_vectors) / sizeof(ir_vectors[0]))

#endif /* GPURSA_IR_VECTORS_H */
