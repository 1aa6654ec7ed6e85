//! Temporary stub; replaced by the full table.
pub struct ApiInfo {
    pub key: i16,
    pub name: &'static str,
    pub max_version: i16,
    pub first_flexible: Option<i16>,
}
static APIS: [ApiInfo; 3] = [
    ApiInfo {
        key: 10,
        name: "FindCoordinator",
        max_version: 6,
        first_flexible: Some(3),
    },
    ApiInfo {
        key: 18,
        name: "ApiVersions",
        max_version: 4,
        first_flexible: Some(3),
    },
    ApiInfo {
        key: 52,
        name: "Vote",
        max_version: 2,
        first_flexible: Some(0),
    },
];
pub fn api_info(key: i16) -> Option<&'static ApiInfo> {
    APIS.iter().find(|a| a.key == key)
}
pub fn api_name(key: i16) -> Option<&'static str> {
    api_info(key).map(|a| a.name)
}
pub fn all_apis() -> &'static [ApiInfo] {
    &APIS
}
impl ApiInfo {
    pub fn is_flexible(&self, version: i16) -> bool {
        self.first_flexible.is_some_and(|f| version >= f)
    }
    pub fn request_header_version(&self, version: i16) -> i16 {
        if self.key == 7 && version == 0 {
            0
        } else if self.is_flexible(version) {
            2
        } else {
            1
        }
    }
    pub fn response_header_version(&self, version: i16) -> i16 {
        if self.key != 18 && self.is_flexible(version) {
            1
        } else {
            0
        }
    }
    pub fn knows_version(&self, version: i16) -> bool {
        (0..=self.max_version).contains(&version)
    }
}
