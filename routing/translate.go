package routing

import (
	"strings"
	"sync"

	"github.com/kljensen/snowball/english"
)

// translationGroups name one thing tools do or act on in English and in
// the scripts written without spaces that real catalogs hold (Chinese,
// simplified and traditional, Japanese and Korean), so that a request in
// one language finds a tool described in another. Each line is English
// words, a colon, and words of two characters: the tokenizer splits those
// scripts into character bigrams, so a two-character word is exactly one
// term. A longer word is listed by its telling bigram (据库 for 数据库,
// database; デー for データ; 용자 for 사용자, user), and a verb by the
// bigram its inflected forms share (読ん, 読み for 読む; 보내 for 보내다).
// The English words of a line translate the others, not each other (the
// lexicon relates English words). A translation is looked up only when
// the catalog does not know the request's own word (as WordNet's
// relations are), and counts as the word in coverage.
var translationGroups = []string{
	// What tools do.
	"search query lookup: 搜索 检索 查询 搜尋 查詢 検索 照会 검색 조회",
	"find: 查找 寻找 尋找 探し 見つ 찾아 찾기",
	"get retrieve fetch: 获取 取得 獲取 가져",
	"read: 读取 阅读 讀取 閱讀 読取 読み 読ん 읽기 읽어",
	"write: 写入 编写 寫入 編寫 書込 書き 쓰기 작성",
	"create: 创建 新建 建立 創建 作成 생성",
	"make: 制作 製作 作っ 作る 만들 만드",
	"generate: 生成",
	"delete remove: 删除 刪除 移除 削除 삭제 제거 지워",
	"update: 更新 업데 갱신",
	"edit modify: 编辑 編輯 修改 編集 수정 편집",
	"change: 更改 变更 變更 変更 변경 바꿔",
	"add: 添加 新增 增加 追加 추가",
	"send: 发送 發送 傳送 送信 送っ 送る 전송 보내",
	"receive: 接收 受信 수신",
	"list: 列出 列表 一覧 목록",
	"show display: 显示 顯示 表示 보여",
	"view: 查看 閲覧 보기",
	"open: 打开 打開 開く 開い 열기 열어",
	"close: 关闭 關閉 閉じ 닫기 닫아",
	"start: 启动 啟動 开始 開始 起動 시작",
	"stop: 停止 중지 정지",
	"run execute: 运行 执行 運行 執行 実行 실행",
	"install: 安装 安裝 설치",
	"download: 下载 下載 다운",
	"upload: 上传 上傳 업로",
	"save: 保存 儲存 저장",
	"copy: 复制 複製 コピ 복사",
	"move: 移动 移動 이동",
	"share: 分享 共享 共有 공유",
	"sort: 排序 並べ 정렬",
	"filter: 过滤 筛选 過濾 篩選 絞り 필터",
	"compare: 比较 比較 비교",
	"monitor: 监控 監控 監視 모니",
	"deploy: 部署 デプ 배포",
	"test: 测试 測試 テス 테스",
	"build: 构建 構建 빌드",
	"merge: 合并 合併 병합",
	"login: 登录 登錄 登入",
	"register: 注册 註冊 登録 등록",
	"subscribe: 订阅 訂閱 購読 구독",
	"notify notification: 通知 알림",
	"remind reminder: 提醒",
	"translate: 翻译 翻譯 翻訳 번역",
	"summarize summary: 摘要 总结 總結 要約 概要 요약",
	"calculate compute: 计算 計算 算出 계산",
	"convert: 转换 轉換 変換 변환",
	"analyze analysis: 分析 解析 분석",
	"predict: 预测 預測 予測 예측",
	"recommend: 推荐 推薦 추천",
	"recognize: 识别 識別 認識 인식",
	"reserve: 预订 预约 預訂 預約 予約 예약",
	"buy purchase: 购买 購買 購入 買っ 구매 구입",
	"pay payment: 支付 付款 決済 결제",
	"play: 播放 再生 재생",
	"pause: 暂停 暫停",
	"record: 记录 記錄 記録 기록",
	"check verify: 检查 檢查 确认 確認 検証 验证 驗證 확인 검증",
	"set configure: 设置 設置 設定 配置 설정 구성",
	"reply answer: 回复 回覆 回答 返信 답장 답변",
	"comment: 评论 評論 コメ 댓글",
	"cancel: 取消 취소",
	"export: 导出 導出 匯出 出力 내보",
	"import: 导入 導入 匯入",
	"extract: 提取 抽出 추출",
	"scan: 扫描 掃描 스캔",
	"print: 打印 列印 印刷 인쇄",
	"sign signature: 签名 簽名 署名 서명",
	"encrypt: 加密 暗号 암호",
	"compress: 压缩 壓縮 圧縮 압축",
	"backup: 备份 備份 백업",
	"restore: 恢复 恢復 復元 복원",
	"sync: 同步 同期 동기",
	"browse: 浏览 瀏覽 閲覧 탐색",
	"route navigate: 路线 路線 导航 導航 経路 ナビ 경로 길찾",
	"track: 跟踪 追踪 追蹤 追跡 추적",
	"publish: 发布 發佈 発行 投稿 게시 발행",
	// Arithmetic.
	"sum total: 求和 总和 總和 合計 합계",
	"plus: 加法 相加 足し 더하 덧셈",
	"subtract minus: 减法 減法 相减 빼기 뺄셈",
	"multiply: 乘法 相乘 掛け 곱하 곱셈",
	"divide: 除法 相除 割る 나누 나눗",
	"average: 平均 평균",
	"square: 平方 제곱",
	"sqrt root: 方根 开方 開方 곱근",
	"logarithm: 对数 對數 対数",
	"percentage percent: 百分 퍼센 백분",
	"random: 随机 隨機 乱数 랜덤",
	// What tools act on.
	"file: 文件 档案 檔案 ァイ 파일",
	"directory folder: 目录 目錄 件夹 料夾 ォル 폴더 디렉",
	"path: 路径 路徑 경로",
	"email mail: 邮件 电邮 郵件 電郵 メー 메일 이메",
	"message: 消息 短信 訊息 簡訊 メッ 메시 문자",
	"chat: 聊天 채팅",
	"calendar: 日历 日曆 カレ 캘린 달력",
	"event: 活动 事件 活動 イベ 이벤 행사",
	"meeting: 会议 會議 会議 회의 미팅",
	"contact: 联系 聯絡 連絡 연락",
	"weather: 天气 天氣 天気 날씨",
	"temperature: 温度 溫度 気温 氣溫 기온 온도",
	"forecast: 预报 預報 予報 예보",
	"price: 价格 價格 価格 値段 가격 시세",
	"stock: 股票 股价 股價 株価 株式 주식 주가",
	"currency: 货币 貨幣 通貨 통화",
	"exchange: 汇率 匯率 為替 환율",
	"market: 市场 市場 시장",
	"trade: 交易 取引 거래",
	"balance: 余额 餘額 残高 잔액 잔고",
	"transfer: 转账 轉帳 送金 송금 이체",
	"wallet: 钱包 錢包 財布 지갑",
	"image picture: 图片 图像 圖片 圖像 画像",
	"photo: 照片 相片 写真 사진",
	"video: 视频 視頻 影片 動画 동영 비디",
	"audio: 音频 音頻 오디",
	"voice speech: 语音 語音 音声 음성",
	"music: 音乐 音樂 音楽 음악",
	"song: 歌曲 楽曲 노래",
	"movie film: 电影 電影 映画 영화",
	"book: 书籍 書籍 图书 圖書 도서",
	"map: 地图 地圖 地図 지도",
	"location place: 位置 地点 地點 場所 위치 장소",
	"address: 地址 住所 주소",
	"distance: 距离 距離 거리",
	"user: 用户 用戶 用者 용자",
	"account: 账户 账号 帳戶 帳號 アカ 계정",
	"password: 密码 密碼 비밀",
	"data: 数据 數據 資料 デー 데이",
	"database: 据库 據庫 料庫 タベ 터베",
	"table: 表格 테이",
	"log: 日志 日誌 ログ 로그",
	"error: 错误 錯誤 エラ 오류 에러",
	"issue: 问题 問題 課題 이슈",
	"question: 问题 問題 質問 질문",
	"ticket: 工单 工單 门票 門票 チケ 티켓",
	"task: 任务 任務 待办 タス 작업 과제",
	"project: 项目 案件",
	"repository repo: 仓库 リポ",
	"branch: 分支",
	"commit: 提交",
	"code: 代码 代碼 코드",
	"function: 函数 函數 関数 함수",
	"interface api: 接口 介面",
	"server: 务器 伺服 서버",
	"service: 服务 服務 서비",
	"container: 容器 컨테",
	"cluster: 集群 叢集 클러",
	"network: 网络 網路 ネッ 네트",
	"website site web: 网站 网页 網站 網頁 ウェ 웹사 웹페",
	"link url: 链接 連結 鏈接 リン 링크",
	"screenshot: 截图 截屏 截圖",
	"browser: 浏览 瀏覽 브라",
	"text: 文本 文字 テキ 텍스",
	"document: 文档 文檔 文書 ドキ 문서",
	"chart graph: 图表 圖表 차트",
	"news: 新闻 新聞 뉴스",
	"article: 文章 記事 기사",
	"paper: 论文 論文 논문",
	"word: 单词 單詞 単語 단어",
	"dictionary: 词典 辞典 字典",
	"language: 语言 語言 言語 언어",
	"knowledge: 知识 知識 지식",
	"information info: 信息 資訊 情報 정보",
	"detail: 详情 詳情 詳細 상세",
	"status: 状态 狀態 状態 상태",
	"setting settings config configuration: 设置 設定 配置 설정",
	"permission: 权限 權限 権限 권한",
	"device: 设备 設備 機器 装置 기기 장치",
	"order: 订单 訂單 注文 주문",
	"product: 产品 產品 商品 製品 상품 제품",
	"inventory: 库存 庫存 在庫 재고",
	"customer: 客户 客戶 顧客 고객",
	"invoice: 发票 發票 請求 청구",
	"flight: 航班 航空 항공",
	"hotel: 酒店 飯店 旅館 ホテ 호텔",
	"restaurant: 餐厅 餐廳 식당",
	"recipe: 食谱 食譜 レシ 레시 요리",
	"note: 笔记 筆記 メモ 메모",
	"memory: 记忆 記憶 기억",
	"remember: 记住 記住",
	"phone: 电话 電話 전화",
	"job: 职位 職位 招聘 求人 채용",
	"game: 游戏 遊戲 게임",
	"score: 比分 得分 점수",
	"team: 团队 團隊 チー",
	"member: 成员 成員 멤버 회원",
	"group: 群组 群組 그룹",
	"channel: 频道 頻道 채널",
	"report: 报告 報告 보고",
	"schedule: 日程 予定 일정",
	"alarm: 闹钟 鬧鐘 アラ 알람",
	// When.
	"time: 时间 時間 시간",
	"date: 日期 日付 날짜",
	"today: 今天 今日 오늘",
	"tomorrow: 明天 明日 내일",
	"yesterday: 昨天 昨日 어제",
	"current: 当前 目前 现在 當前 現在 현재 지금",
	"latest: 最新 최신",
	"recent: 最近 최근",
}

// translationWeight is a translation's weight relative to the word: a
// translation names the same thing, but a table of a few words knows
// neither the senses nor the usage a catalog's own words carry.
const translationWeight = 0.8

var (
	translationOnce  sync.Once
	translationIndex map[string][]string
)

// translationsOf returns the terms that translate term (an English stem
// or a two-character word of a script without spaces).
func translationsOf(term string) []string {
	translationOnce.Do(buildTranslations)
	return translationIndex[term]
}

func buildTranslations() {
	translationIndex = map[string][]string{}
	link := func(a, b string) {
		if a != b && !contains(translationIndex[a], b) {
			translationIndex[a] = append(translationIndex[a], b)
		}
	}
	for _, g := range translationGroups {
		en, rest, _ := strings.Cut(g, ":")
		words := strings.Fields(rest)
		for _, e := range strings.Fields(en) {
			e = english.Stem(e, true)
			for _, w := range words {
				link(e, w)
				link(w, e)
			}
		}
		for _, a := range words {
			for _, b := range words {
				link(a, b)
			}
		}
	}
}
