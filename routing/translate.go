package routing

import (
	"strings"
	"sync"

	"github.com/kljensen/snowball/english"
)

// translationGroups name one thing tools do or act on in English and in
// the scripts written without spaces that real catalogs hold (Chinese,
// Japanese, Korean), so that a request in one language finds a tool
// described in another. Each line is an English word, a colon, and words
// of two characters: the tokenizer splits those scripts into character
// bigrams, so a two-character word is exactly one term. A translation is
// looked up only when the catalog does not know the request's own word
// (as WordNet's relations are), and counts as the word in coverage.
var translationGroups = []string{
	"search: 搜索 查找 检索 查询 検索 검색",
	"get: 获取 取得",
	"read: 读取 阅读 読取 읽기",
	"write: 写入 编写 書込",
	"file: 文件 파일",
	"directory: 目录",
	"create: 创建 新建 作成 생성",
	"generate: 生成",
	"delete: 删除 削除 삭제",
	"update: 更新 修改",
	"send: 发送 送信 전송",
	"email: 邮件 电邮 메일",
	"message: 消息 短信 메시",
	"weather: 天气 天気 날씨",
	"forecast: 预报 予報 예보",
	"translate: 翻译 翻訳 번역",
	"image: 图片 图像 画像",
	"video: 视频 動画 동영",
	"music: 音乐 音楽 음악",
	"map: 地图 地図 지도",
	"location: 位置 地点",
	"route: 路线 导航",
	"calculate: 计算 計算 계산",
	"price: 价格 価格 가격",
	"stock: 股票 株価 주식",
	"news: 新闻 뉴스",
	"calendar: 日历",
	"event: 活动",
	"schedule: 日程 予定 일정",
	"meeting: 会议 会議 회의",
	"user: 用户",
	"list: 列出 列表 一覧 목록",
	"data: 数据",
	"table: 表格",
	"document: 文档 文書 문서",
	"code: 代码 코드",
	"repository: 仓库",
	"commit: 提交",
	"download: 下载 다운",
	"upload: 上传 업로",
	"run: 运行 执行 実行 실행",
	"install: 安装",
	"log: 日志 ログ 로그",
	"time: 时间 時間 시간",
	"date: 日期 日付 날짜",
	"currency: 货币 通貨 통화",
	"exchange: 汇率 為替 환율",
	"convert: 转换 変換 변환",
	"summary: 摘要 总结 要約 요약",
	"analyze: 分析 분석",
	"report: 报告 報告 보고",
	"chart: 图表",
	"order: 订单 注文 주문",
	"payment: 支付 付款 決済 결제",
	"flight: 航班 항공",
	"hotel: 酒店 ホテ 호텔",
	"restaurant: 餐厅 식당",
	"recipe: 食谱 レシ 레시",
	"reserve: 预订 预约 予約 예약",
	"note: 笔记 メモ 메모",
	"task: 任务 タス 작업",
	"project: 项目",
	"browse: 浏览",
	"website: 网站 网页 웹사",
	"link: 链接 링크",
	"screenshot: 截图",
	"contact: 联系 연락",
	"phone: 电话 電話 전화",
	"memory: 记忆 記憶 기억",
	"remember: 记住",
	"ticket: 工单",
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
	for _, g := range translationGroups {
		en, rest, _ := strings.Cut(g, ":")
		terms := []string{english.Stem(strings.TrimSpace(en), true)}
		for _, w := range strings.Fields(rest) {
			if !contains(terms, w) {
				terms = append(terms, w)
			}
		}
		for _, a := range terms {
			for _, b := range terms {
				if a != b && !contains(translationIndex[a], b) {
					translationIndex[a] = append(translationIndex[a], b)
				}
			}
		}
	}
}
